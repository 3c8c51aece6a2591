"""What the operators share: finding the soft body the user means."""

from __future__ import annotations

from typing import Literal

import bpy

from ..runtime.properties import object_settings, ROLE_CAGE, ROLE_SOURCE


# What Operator.execute/invoke may return.
OperatorResult = set[Literal["RUNNING_MODAL", "CANCELLED", "FINISHED", "PASS_THROUGH", "INTERFACE"]]


def soft_body(context: bpy.types.Context) -> bpy.types.Object | None:
    """The active object's soft body: the object itself, or the source of an active cage."""
    obj = context.active_object
    if obj is None:
        return None
    if object_settings(obj).role == ROLE_CAGE:
        obj = object_settings(obj).source
    return obj if obj is not None and object_settings(obj).role == ROLE_SOURCE else None


class SoftBodyOperator(bpy.types.Operator):
    """Base of the operators that act on a soft body (not registered itself): they run when the
    active object is a soft body or its cage."""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if soft_body(context) is None:
            cls.poll_message_set("Select a TetRig soft body or its cage")
            return False
        return True

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

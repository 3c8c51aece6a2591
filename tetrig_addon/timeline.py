"""Frame cache: the state at frame F is a function of the settings and F alone.

Blender's own soft body only steps when the new frame is the last one + 1 and shows stale state
after a jump. Here every frame's state is kept in memory once computed; a request for frame F
starts from the latest cached frame at or before F (the start frame's rest state at worst) and
steps forward, caching each frame on the way. Played, jumped to, scrubbed back to, baked or
rendered, frame F therefore always gets the same numbers.
"""

from __future__ import annotations

from typing import Callable, Hashable

import numpy as np

from .solver import State


class FrameCache:
    """Per-frame states of one simulated object.

    Args:
        start_frame: the rest frame (int).
        rest: the ``State`` at the start frame.
        key: anything hashable that identifies the inputs (binding, settings); a cache whose key
            differs from the current one is stale and must be rebuilt.
    """

    def __init__(self, start_frame: int, rest: State, key: Hashable) -> None:
        self.start_frame = int(start_frame)
        self.key = key
        self._states: dict[int, State] = {self.start_frame: rest}
        # First frame whose step was non-finite (and was replaced by the last good state), if any.
        self.first_bad_frame: int | None = None

    def __len__(self) -> int:
        return len(self._states)

    def cached_frames(self) -> list[int]:
        return sorted(self._states)

    def state_at(self, frame: int, advance: Callable[[State, int], State]) -> State:
        """The state at ``frame``, stepping forward from the nearest earlier cached frame.

        Args:
            frame: the requested frame; frames before the start frame give the rest state.
            advance: ``advance(state, f)`` returns the state at frame f + 1 from the one at f.

        Returns:
            The ``State`` at ``frame`` (the cached object: callers must not modify it).

        If ``advance`` produces a non-finite state, stepping stops there: that frame and all later
        ones repeat the last finite state (the object freezes rather than exploding), and
        ``first_bad_frame`` records where it happened.
        """
        frame = max(int(frame), self.start_frame)
        if frame in self._states:
            return self._states[frame]
        base = max(f for f in self._states if f <= frame)
        state = self._states[base]
        for f in range(base, frame):
            nxt = advance(state, f)
            if not (np.all(np.isfinite(nxt.positions)) and np.all(np.isfinite(nxt.velocities))):
                nxt = state.moved(state.positions, np.zeros_like(state.velocities), state.rotations)
                self.first_bad_frame = f + 1 if self.first_bad_frame is None else self.first_bad_frame
            self._states[f + 1] = nxt
            state = nxt
        return state

"""Frame cache: the state at frame F is a function of the settings and F alone.

Blender's own soft body only steps when the new frame is the last one + 1 and shows stale state
after a jump. Here every frame's state is kept in memory once computed; a request for frame F
starts from the latest cached frame at or before F (the start frame's rest state at worst) and
steps forward, caching each frame on the way. Played, jumped to, scrubbed back to, baked or
rendered, frame F therefore always gets the same numbers.

The cache serves every body kind (``body.Body``): its states need only say whether they are
finite and give themselves at rest (``FrameState``).
"""

from __future__ import annotations

from typing import Callable, Generic, Hashable, Protocol, Self, TypeVar


class FrameState(Protocol):
    """What the frame cache asks of a body's state (``solver.State``, ``jiggle.RigState``)."""

    def finite(self) -> bool:
        """Whether every position and velocity is finite."""
        ...

    def halted(self) -> Self:
        """This state with zero velocities (where an unstable simulation freezes)."""
        ...


S = TypeVar("S", bound=FrameState)


class FrameCache(Generic[S]):
    """Per-frame states of one simulated object.

    Args:
        start_frame: the rest frame (int).
        rest: the state at the start frame.
        key: anything hashable that identifies the inputs (binding, settings); a cache whose key
            differs from the current one is stale and must be rebuilt.
    """

    def __init__(self, start_frame: int, rest: S, key: Hashable) -> None:
        self.start_frame = int(start_frame)
        self.key = key
        self._states: dict[int, S] = {self.start_frame: rest}
        # First frame whose step was non-finite (and was replaced by the last good state), if any.
        self.first_bad_frame: int | None = None

    def __len__(self) -> int:
        return len(self._states)

    def cached_frames(self) -> list[int]:
        return sorted(self._states)

    def state_at(self, frame: int, advance: Callable[[S, int], S]) -> S:
        """The state at ``frame``, stepping forward from the nearest earlier cached frame.

        Args:
            frame: the requested frame; frames before the start frame give the rest state.
            advance: ``advance(state, f)`` returns the state at frame f + 1 from the one at f.

        Returns:
            The state at ``frame`` (the cached object: callers must not modify it).

        If ``advance`` produces a state that is not finite, stepping stops there: that frame and
        all later ones repeat the last finite state, halted (the object freezes rather than
        exploding), and ``first_bad_frame`` records where it happened.
        """
        frame = max(int(frame), self.start_frame)
        if frame in self._states:
            return self._states[frame]
        base = max(f for f in self._states if f <= frame)
        state = self._states[base]
        for f in range(base, frame):
            nxt = advance(state, f)
            if not nxt.finite():
                nxt = state.halted()
                self.first_bad_frame = f + 1 if self.first_bad_frame is None else self.first_bad_frame
            self._states[f + 1] = nxt
            state = nxt
        return state

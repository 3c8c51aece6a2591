"""The files TetRig reads and writes: the seed's rig JSON (``seed_json``: control points, tets and
the binding), PC2 point caches (``pc2``) and the animation JSON (``animation_json``: the rig, the
control points' motion and the quality pass's settings), for other engines and tools.
"""

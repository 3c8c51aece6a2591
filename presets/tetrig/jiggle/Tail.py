# TetRig jiggle preset: Tail.
# Animal tails: a little livelier than hair (1.5 Hz), a longer follow-through (damping ratio
# 0.4), half gravity (a tail carries itself), 90° cone.
# Stiffness k = (2 pi f)^2 with f = 1.5 Hz; damping c = 2 zeta sqrt(k) with damping ratio zeta = 0.4
# (critical: zeta = 1, c = 2 sqrt(k); below about 0.3 a long chain passes each bone's swing on to the next
# and amplifies it). Frequencies are independent of the bone's length and the rig's scale.
import bpy
settings = bpy.context.active_pose_bone.tetrig_jiggle

settings.stiffness = 88.8264
settings.damping = 7.5398
settings.gravity_scale = 0.5
settings.max_speed = 30.0
settings.stretch = False
settings.angle_limit = 1.570796

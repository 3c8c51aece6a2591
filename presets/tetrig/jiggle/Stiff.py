# TetRig jiggle preset: Stiff.
# Stiff accessories (feathers, short tufts, antennas with a core): fast (5 Hz), nearly critically
# damped (0.8: a small overshoot), almost no sag, a 30° cone.
# Stiffness k = (2 pi f)^2 with f = 5.0 Hz; damping c = 2 zeta sqrt(k) with damping ratio zeta = 0.8
# (critical: zeta = 1, c = 2 sqrt(k); below about 0.3 a long chain passes each bone's swing on to the next
# and amplifies it). Frequencies are independent of the bone's length and the rig's scale.
import bpy
settings = bpy.context.active_pose_bone.tetrig_jiggle

settings.stiffness = 986.9604
settings.damping = 50.2655
settings.gravity_scale = 0.1
settings.max_speed = 10.0
settings.stretch = False
settings.angle_limit = 0.523599

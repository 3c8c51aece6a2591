# TetRig jiggle preset: Soft.
# Soft, floppy appendages (cloth strips, loose straps): slow (1 Hz), long swinging (damping ratio
# 0.3), full gravity, no angle limit.
# Stiffness k = (2 pi f)^2 with f = 1.0 Hz; damping c = 2 zeta sqrt(k) with damping ratio zeta = 0.3
# (critical: zeta = 1, c = 2 sqrt(k); below about 0.3 a long chain passes each bone's swing on to the next
# and amplifies it). Frequencies are independent of the bone's length and the rig's scale.
import bpy
settings = bpy.context.active_pose_bone.tetrig_jiggle

settings.stiffness = 39.4784
settings.damping = 3.7699
settings.gravity_scale = 1.0
settings.max_speed = 50.0
settings.stretch = False
settings.angle_limit = 3.141593

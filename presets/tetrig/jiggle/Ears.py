# TetRig jiggle preset: Ears.
# Long ears and antennae: springy (3 Hz), a quick bounce (damping ratio 0.3), little sag (gravity
# 0.2), a 45° cone.
# Stiffness k = (2 pi f)^2 with f = 3.0 Hz; damping c = 2 zeta sqrt(k) with damping ratio zeta = 0.3
# (critical: zeta = 1, c = 2 sqrt(k); below about 0.3 a long chain passes each bone's swing on to the next
# and amplifies it). Frequencies are independent of the bone's length and the rig's scale.
import bpy
settings = bpy.context.active_pose_bone.tetrig_jiggle

settings.stiffness = 355.3058
settings.damping = 11.3097
settings.gravity_scale = 0.2
settings.max_speed = 20.0
settings.stretch = False
settings.angle_limit = 0.785398

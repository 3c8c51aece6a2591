# TetRig jiggle preset: Hair.
# Long hair and ponytails: a slow swing (1.2 Hz, a 0.2-0.5 m strand's pendulum rate), damped to
# settle after about one swing, full gravity so it hangs, and a 120° cone so it never folds back
# through the head.
# Stiffness k = (2 pi f)^2 with f = 1.2 Hz; damping c = 2 zeta sqrt(k) with damping ratio zeta = 0.5
# (critical: zeta = 1, c = 2 sqrt(k); below about 0.3 a long chain passes each bone's swing on to the next
# and amplifies it). Frequencies are independent of the bone's length and the rig's scale.
import bpy
settings = bpy.context.active_pose_bone.tetrig_jiggle

settings.stiffness = 56.8489
settings.damping = 7.5398
settings.gravity_scale = 1.0
settings.max_speed = 30.0
settings.stretch = False
settings.angle_limit = 2.094395

import glob, os, sys, bpy
# Setup for the Preferences picture: the built Linux zip for this Blender's Python installed from
# disk into a throw-away user folder (run with BLENDER_USER_RESOURCES set), then Preferences >
# Add-ons open on TetRig:
#   make build PLATFORMS=linux-x64
#   BLENDER_USER_RESOURCES=/tmp/prefshot GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/prefs.png 20 docs/screenshot_preferences_setup.py
zip_path = glob.glob(os.path.join(os.getcwd(), "dist", "tetrig-*-linux_x64-py%d%d.zip" % sys.version_info[:2]))[0]
print("install:", bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                            enable_on_install=True))
bpy.context.preferences.active_section = "ADDONS"
bpy.ops.screen.userpref_show()
for window in bpy.context.window_manager.windows:
    for area in window.screen.areas:
        if area.type == "PREFERENCES":
            area.spaces.active.filter_text = "TetRig"

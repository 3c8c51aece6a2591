// SPDX-License-Identifier: GPL-3.0-or-later
//
// TetRig Bake: a Flamenco 3 custom job type that bakes TetRig soft bodies, one task per shot.
// Install: copy this file into the `scripts/` folder beside the Flamenco Manager executable and
// restart the Manager; point `tetrig_batch` at TetRig's scripts/batch.py on the shared storage.
// Each task runs
//   blender -b -y <shot>.blend --python <batch.py> -- --all --output <output_dir>/<shot>.baked.blend
// and, with render_after_bake, a render task per shot after its bake:
//   blender -b -y <output_dir>/<shot>.baked.blend --python <load_addon.py> -a
// Tested with a stand-in for Flamenco's job compiler (tests/flamenco/flamenco_standin.js).

const JOB_TYPE = {
    label: "TetRig Bake",
    settings: [
        { key: "blendfiles", type: "string", required: true, visible: "submission",
          description: "Shots to bake, separated by ';' (paths on the shared storage)" },
        { key: "objects", type: "string", default: "", visible: "submission",
          description: "Objects to bake, separated by ';' (empty: every soft body)" },
        { key: "output_dir", type: "string", subtype: "dir_path", required: true, visible: "submission",
          description: "Where the <shot>.baked.blend files go" },
        { key: "tetrig_batch", type: "string", subtype: "file_path", required: true, visible: "submission",
          default: "{shared}/tools/tetrig/scripts/batch.py",
          description: "TetRig's scripts/batch.py on the shared storage" },
        { key: "render_after_bake", type: "bool", default: false, visible: "submission",
          description: "Also render each baked shot's animation (one task per shot, after its bake)" },
    ],
};

function splitList(text) {
    return (text || "").split(";").map((item) => item.trim()).filter((item) => item);
}

function compileJob(job) {
    const settings = job.settings;
    const blendfiles = splitList(settings.blendfiles);
    if (!blendfiles.length) {
        throw "TetRig Bake: no .blend files given";
    }
    const objects = splitList(settings.objects);
    let which = ["--all"];
    if (objects.length) {
        which = [];
        for (const name of objects) which.push("--object", name);
    }
    const loadAddon = path.join(path.dirname(settings.tetrig_batch), "load_addon.py");
    const shots = new Set();
    for (const blendfile of blendfiles) {
        const shot = path.stem(blendfile);
        if (shots.has(shot)) {
            throw `TetRig Bake: two shots named ${shot} would write the same ${shot}.baked.blend`;
        }
        shots.add(shot);
        const baked = path.join(settings.output_dir, `${shot}.baked.blend`);

        const bake = author.Task(`bake-${shot}`, "blender");
        bake.addCommand(author.Command("blender-render", {
            exe: "{blender}",
            exeArgs: "{blenderArgs}",  // "-b -y" on the standard Flamenco setup
            argsBefore: [],
            blendfile: blendfile,
            args: ["--python", settings.tetrig_batch, "--", ...which, "--output", baked],
        }));
        job.addTask(bake);

        if (settings.render_after_bake) {
            const render = author.Task(`render-${shot}`, "blender");
            render.addCommand(author.Command("blender-render", {
                exe: "{blender}",
                exeArgs: "{blenderArgs}",
                argsBefore: [],
                blendfile: baked,
                args: ["--python", loadAddon, "-a"],
            }));
            render.addDependency(bake);
            job.addTask(render);
        }
    }
}

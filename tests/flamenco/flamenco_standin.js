// A stand-in for Flamenco 3's job compiler, enough to run a custom job type under Node:
// the globals `author` (Task, Command), `path` (join, dirname, basename, stem, POSIX paths as on a
// Linux Manager) and `print`, and a job whose addTask records the tasks. It loads the job type file
// as Flamenco does (a plain script defining JOB_TYPE and compileJob), compiles one job and prints
// {"job_type": ..., "tasks": [...]} as JSON, or {"error": ...} when compileJob throws.
//
//   node flamenco_standin.js JOB_TYPE.js SETTINGS_JSON
"use strict";
const fs = require("fs");
const nodePath = require("path").posix;
const vm = require("vm");

class Task {
    constructor(name, type) {
        this.name = name;
        this.type = type;
        this.commands = [];
        this.dependencies = [];
    }
    addCommand(command) { this.commands.push(command); }
    addDependency(task) {
        if (!(task instanceof Task)) throw new TypeError("addDependency takes a Task");
        this.dependencies.push(task);
    }
}

function standIn() {
    const tasks = [];
    const job = { settings: null, addTask(task) {
        if (!(task instanceof Task)) throw new TypeError("addTask takes a Task");
        tasks.push(task);
    } };
    const context = {
        author: { Task: (name, type) => new Task(name, type), Command: (type, parameters) => ({ type, parameters }) },
        path: {
            join: (...parts) => nodePath.join(...parts),
            dirname: (p) => nodePath.dirname(p),
            basename: (p) => nodePath.basename(p),
            stem: (p) => nodePath.basename(p, nodePath.extname(p)),
        },
        print: (...args) => process.stderr.write(args.join(" ") + "\n"),
    };
    return { job, tasks, context };
}

const [jobTypeFile, settingsJson] = process.argv.slice(2);
const { job, tasks, context } = standIn();
vm.createContext(context);
vm.runInContext(fs.readFileSync(jobTypeFile, "utf8") + "\n;globalThis.JOB_TYPE = JOB_TYPE;", context,
                { filename: jobTypeFile });
job.settings = JSON.parse(settingsJson);
let out;
try {
    context.compileJob(job);
    out = { job_type: context.JOB_TYPE, tasks: tasks.map((t) => ({
        name: t.name, type: t.type, commands: t.commands, dependencies: t.dependencies.map((d) => d.name),
    })) };
} catch (error) {
    out = { error: String(error) };
}
process.stdout.write(JSON.stringify(out));

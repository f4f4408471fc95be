#!/usr/bin/env python3
"""boinc_emu_input: writes the input folder of BOINC's client emulator
(client/sim.cpp, built with client/makefile_sim) for a `locus-sim client`
scenario, so that both simulators run the same host and projects
(docs/benchmarks.md, "Client scenarios against BOINC's emulator").

    bench/boinc_emu_input.py SCENARIO DIR
    bench/boinc_emu_input.py --figures DIR

DIR receives client_state.xml, global_prefs.xml and cc_config.xml. Run the
emulator from DIR with `--infile_prefix ./ --outfile_prefix ./ --duration
SECONDS --delta SECONDS` (printed on stdout as one line); the figures are in
DIR/results.txt.

`--figures DIR`, after the run, reads the emulator's DIR/timeline.html (one
row per time step: the tasks running on the CPUs and on the GPUs, with their
instances) and prints as JSON what results.txt does not give: the CPU and
GPU figures apart, as locus-sim defines them (docs/sim.md, "locus-sim
client"). Its results.txt counts the GPUs in: peak and use are CPU + GPU
flops, a GPU task charged its device's speed plus its CPU share. Exact
only for a host always on and active (the GPU scenarios): the timeline
does not list the tasks of the steps it shows as "BOINC not running",
though the emulator computes them on.

What the emulator cannot take is dropped, as its reader would: it has no
checkpoint interval (its tasks checkpoint at every step), no ram limit per
task and no mean connected period (always 1 h, as in our format).

GPUs (`gpus:`, `gpu_gflops:`, `ngpus=`): the host's devices become one
NVIDIA coprocessor in host_info (count, peak_flops, have_cuda), each GPU
app a `cuda` app version using `ngpus` devices and `ncpus` CPUs (0.1 when
unset, as in locus-sim). A GPU job's flops are C x 3600 x gpu_gflops (C
device-hours) and its version runs at gpu_gflops x ngpus, so it takes
C / ngpus hours, as in locus-sim. The emulator counts a device at 0.2 of
its peak_flops (work_fetch.cpp, WORK_FETCH::init: "20% as a rough estimate
of GPU efficiency") in its REC, work-fetch priority and figures, so the
device is declared with peak_flops = gpu_gflops / 0.2: its counted speed
is then the speed its tasks really run at. Exact for one device only: the
emulator multiplies the device count in twice (relative_speed is already
the total of the devices, gpu_peak_flops multiplies it by the count again).
"""
import json
import os
import re
import sys

# The scenario format's defaults (../shared/scenarios/client/README.md).
DEFAULTS = {
    "duration_days": 10, "time_step_seconds": 60, "ncpus": 1, "cpu_gflops": 1, "ram_gb": 16,
    "on_frac": 1, "on_lambda_hours": 1, "active_frac": 1, "active_lambda_hours": 1,
    "connected_frac": 1, "min_buffer_days": 0.1, "extra_buffer_days": 0.5,
    "cpu_scheduling_period_minutes": 60, "leave_in_memory": "false", "rec_half_life_days": 10,
}
JOB = re.compile(r"^(\w[\w.-]*)\(\s*([^,]+),\s*([^,)]+)(?:,\s*([^)]+))?\)\s*(.*)$")
HOUR = 3600.0
GPU_SPEED_PER_CPU = 10      # gpu_gflops when unset: 10 x cpu_gflops (docs/sim.md)
GPU_TASK_NCPUS = 0.1        # ncpus of a GPU app when unset
EMU_GPU_EFFICIENCY = 0.2    # the share of peak_flops the emulator credits a device with


def parse(path):
    """The scenario's keys and its projects, each with its apps in order."""
    keys, projects = dict(DEFAULTS), {}
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].strip()
        if not line or ":" not in line:
            continue
        key, value = (s.strip() for s in line.split(":", 1))
        if key not in ("project", "app"):
            keys[key] = value
            continue
        m = JOB.match(value)
        if not m:
            sys.exit(f"boinc_emu_input: {path}: cannot read '{value}'")
        name, hours, delay, share, rest = m.groups()
        opts = dict(o.split("=", 1) for o in rest.split())
        app = {"hours": float(hours), "delay": float(delay), "opts": opts}
        if key == "project":
            projects[name] = {"share": float(share), "opts": opts, "apps": [app]}
        else:
            projects[name]["apps"].append(app)
    return keys, projects


def num(keys, key):
    return float(keys[key])


def app_xml(pname, k, app, flops, gpu_flops):
    opts = app["opts"]
    ngpus = float(opts.get("ngpus", 0))
    name = f"{pname}_app{k}"
    if ngpus > 0:
        # C is hours on one whole device; the version runs at its devices' speed
        ncpus = float(opts.get("ncpus", GPU_TASK_NCPUS))
        fpops = app["hours"] * HOUR * gpu_flops
        version = (f"        <plan_class>cuda</plan_class>\n"
                   f"        <avg_ncpus>{ncpus:g}</avg_ncpus>\n        <flops>{gpu_flops * ngpus:.6e}</flops>\n"
                   f"        <coproc><type>NVIDIA</type><count>{ngpus:g}</count></coproc>\n")
    else:
        ncpus = float(opts.get("ncpus", 1))
        fpops = app["hours"] * HOUR * flops   # C is CPU hours: a task's flops whatever its width
        version = f"        <avg_ncpus>{ncpus:g}</avg_ncpus>\n        <flops>{flops * ncpus:.6e}</flops>\n"
    limit = f"        <max_concurrent>{opts['max_concurrent']}</max_concurrent>\n" if "max_concurrent" in opts else ""
    return (f"    <app>\n        <name>{name}</name>\n"
            f"        <latency_bound>{app['delay'] * HOUR:.0f}</latency_bound>\n"
            f"        <fpops_est>{fpops:.6e}</fpops_est>\n"
            f"        <fpops><mean>{fpops:.6e}</mean><std_dev>0</std_dev></fpops>\n"
            f"        <weight>{opts.get('weight', 1)}</weight>\n{limit}    </app>\n"
            f"    <app_version>\n        <app_name>{name}</app_name>\n        <version_num>1</version_num>\n"
            f"{version}    </app_version>\n")


def project_xml(name, p, flops, gpu_flops):
    opts = p["opts"]
    avail = ""
    if float(opts.get("avail_frac", 1)) < 1:
        lam = float(opts.get("avail_lambda_hours", 1)) * HOUR
        avail = f"    <available><frac>{opts['avail_frac']}</frac><lambda>{lam:.0f}</lambda></available>\n"
    head = (f"<project>\n    <master_url>http://{name}/</master_url>\n    <project_name>{name}</project_name>\n"
            f"    <resource_share>{p['share']:g}</resource_share>\n{avail}</project>\n")
    return head + "".join(app_xml(name, k, a, flops, gpu_flops) for k, a in enumerate(p["apps"]))


def gpu_speed(keys):
    """flops/s of one device (gpu_gflops, else 10 x cpu_gflops)."""
    if "gpu_gflops" in keys:
        return num(keys, "gpu_gflops") * 1e9
    return GPU_SPEED_PER_CPU * num(keys, "cpu_gflops") * 1e9


def coprocs_xml(keys):
    """The host's GPUs as the emulator's host_info reader takes them."""
    ngpus = int(num(keys, "gpus")) if "gpus" in keys else 0
    if ngpus <= 0:
        return ""
    if ngpus > 1:
        print("boinc_emu_input: more than one GPU: the emulator's GPU figures count the devices twice",
              file=sys.stderr)
    peak = gpu_speed(keys) / EMU_GPU_EFFICIENCY
    return ("    <coprocs>\n        <coproc_cuda>\n"
            f"            <count>{ngpus}</count>\n            <peak_flops>{peak:.6e}</peak_flops>\n"
            "            <have_cuda>1</have_cuda>\n        </coproc_cuda>\n    </coprocs>\n")


def state_xml(keys, projects):
    flops = num(keys, "cpu_gflops") * 1e9
    on, active = num(keys, "on_frac"), num(keys, "active_frac")
    return ("<client_state>\n<host_info>\n"
            f"    <p_ncpus>{int(num(keys, 'ncpus'))}</p_ncpus>\n    <p_fpops>{flops:.6e}</p_fpops>\n"
            f"    <m_nbytes>{num(keys, 'ram_gb') * 1e9:.0f}</m_nbytes>\n{coprocs_xml(keys)}</host_info>\n<time_stats>\n"
            f"    <on_frac>{on:g}</on_frac>\n    <connected_frac>{num(keys, 'connected_frac'):g}</connected_frac>\n"
            f"    <active_frac>{active:g}</active_frac>\n    <gpu_active_frac>{active:g}</gpu_active_frac>\n"
            f"    <on_lambda>{num(keys, 'on_lambda_hours') * HOUR:.0f}</on_lambda>\n"
            f"    <active_lambda>{num(keys, 'active_lambda_hours') * HOUR:.0f}</active_lambda>\n"
            f"    <connected_lambda>{HOUR:.0f}</connected_lambda>\n</time_stats>\n"
            + "".join(project_xml(n, p, flops, gpu_speed(keys)) for n, p in projects.items()) + "</client_state>\n")


def prefs_xml(keys):
    leave = 1 if str(keys["leave_in_memory"]).lower() in ("1", "true", "yes") else 0
    return ("<global_preferences>\n"
            f"    <work_buf_min_days>{num(keys, 'min_buffer_days'):g}</work_buf_min_days>\n"
            f"    <work_buf_additional_days>{num(keys, 'extra_buffer_days'):g}</work_buf_additional_days>\n"
            f"    <cpu_scheduling_period_minutes>{num(keys, 'cpu_scheduling_period_minutes'):g}"
            "</cpu_scheduling_period_minutes>\n"
            f"    <leave_apps_in_memory>{leave}</leave_apps_in_memory>\n"
            "    <max_ncpus_pct>100</max_ncpus_pct>\n    <cpu_usage_limit>100</cpu_usage_limit>\n"
            "    <run_if_user_active>1</run_if_user_active>\n</global_preferences>\n")


STEP = re.compile(r"<td valign=top>[^<]*</td>\s*<th>CPU</th>")
TASK = re.compile(r"<tr valign=top><td>([0-9.]+)</td><td>([^<]*)</td><td bgcolor=[^>]*><font color=#ffffff>\*?([^<]*)</font>")
REPORT = re.compile(r"result (\S+) reported; <font color=#([0-9a-f]+)>")


def figures(folder):
    """CPU and GPU figures apart, from the emulator's timeline of one run."""
    state = open(os.path.join(folder, "client_state.xml"), encoding="utf-8").read()
    ncpus = int(re.search(r"<p_ncpus>(\d+)</p_ncpus>", state).group(1))
    m = re.search(r"<coproc_cuda>\s*<count>(\d+)</count>", state)
    ngpus = int(m.group(1)) if m else 0
    gpu_apps = set(re.findall(r"<app_name>([^<]+)</app_name>\s*<version_num>\d+</version_num>\s*"
                              r"<plan_class>cuda</plan_class>", state))
    inputs = open(os.path.join(folder, "inputs.txt"), encoding="utf-8").read()
    delta = float(re.search(r"Time step: ([0-9.]+)", inputs).group(1))
    steps, column = 0, 0
    cpu_use, gpu_use, gpu_cpu, task_dev_s, task_app = {}, {}, 0.0, {}, {}
    reports, step_cpu, step_feed = [], {}, 0.0

    def end_step():
        # the emulator's accounting (sim.cpp, ACTIVE_TASK_SET::poll): when the
        # CPUs are overcommitted the CPU tasks share what the GPU tasks leave
        nonlocal gpu_cpu
        busy = sum(step_cpu.values())
        scale = 1.0
        if busy + step_feed > ncpus and busy > 0:
            scale = (ncpus - step_feed) / busy
        for proj, inst in step_cpu.items():
            cpu_use[proj] = cpu_use.get(proj, 0) + inst * scale * delta
        gpu_cpu += step_feed * delta

    for line in open(os.path.join(folder, "timeline.html"), encoding="utf-8", errors="replace"):
        # rows of steps it shows as "BOINC not running" share one line
        idle_steps = line.count("BOINC not running")
        if STEP.search(line) or idle_steps:
            if steps:
                end_step()
            steps += max(idle_steps, 1)
            column, step_cpu, step_feed = 0, {}, 0.0
            continue
        if "<td width=400 valign=top>" in line:
            column += 1          # 1: the CPUs, 2: the GPU type
        reports += REPORT.findall(line)
        for inst, app, job in TASK.findall(line):
            proj, inst = job.rsplit("_", 1)[0], float(inst)
            task_app[job] = app
            if column == 1 and app not in gpu_apps:
                step_cpu[proj] = step_cpu.get(proj, 0) + inst
            elif column == 1:
                step_feed += inst
            elif column == 2:
                gpu_use[proj] = gpu_use.get(proj, 0) + inst * delta
                task_dev_s[job] = task_dev_s.get(job, 0) + inst * delta
    if steps:
        end_step()
    period = steps * delta
    cpu_total, gpu_total = sum(cpu_use.values()), sum(gpu_use.values())
    projects = sorted(set(re.findall(r"<project_name>([^<]+)</project_name>", state)))
    per_app = {}
    late_dev_s = 0.0
    for job, color in reports:
        app = task_app.get(job, "?")
        met = color == "00cc00"
        k = per_app.setdefault(app, [0, 0])
        k[0 if met else 1] += 1
        if not met:
            late_dev_s += task_dev_s.get(job, 0)
    shares = dict(re.findall(r"<project_name>([^<]+)</project_name>\s*<resource_share>([0-9.e+-]+)<", state))
    rs = sum(float(shares[p]) for p in projects)
    out = {
        "time_s": period,
        "cpu_idle_fraction": 1 - cpu_total / (ncpus * period),      # CPU tasks only, as locus-sim
        "cpu_share_violation": sum(abs(cpu_use.get(p, 0) - cpu_total * float(shares[p]) / rs)
                                   for p in projects) / cpu_total if cpu_total else 0,
        "gpu_cpu_fraction": gpu_cpu / (ncpus * period),
        "cpu_used_fraction": {p: cpu_use.get(p, 0) / (ncpus * period) for p in projects},
        "met_missed_per_app": per_app,
    }
    if ngpus:
        out.update({
            "gpu_idle_fraction": 1 - gpu_total / (ngpus * period),
            "gpu_wasted_fraction": late_dev_s / (ngpus * period),
            "gpu_used_fraction": {p: gpu_use.get(p, 0) / (ngpus * period) for p in projects},
            "gpu_tasks_run": len(task_dev_s),
        })
    print(json.dumps(out, indent=1, sort_keys=True))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--figures":
        figures(sys.argv[2])
        return
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    keys, projects = parse(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    files = {"client_state.xml": state_xml(keys, projects), "global_prefs.xml": prefs_xml(keys),
             "cc_config.xml": "<cc_config>\n<options>\n"
                              f"    <rec_half_life_days>{num(keys, 'rec_half_life_days'):g}</rec_half_life_days>\n"
                              "</options>\n</cc_config>\n"}
    for name, text in files.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"--duration {num(keys, 'duration_days') * 86400:.0f} --delta {num(keys, 'time_step_seconds'):g}")


if __name__ == "__main__":
    main()

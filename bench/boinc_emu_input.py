#!/usr/bin/env python3
"""boinc_emu_input: writes the input folder of BOINC's client emulator
(client/sim.cpp, built with client/makefile_sim) for a `locus-sim client`
scenario, so that both simulators run the same host and projects
(docs/benchmarks.md, "Client scenarios against BOINC's emulator").

    bench/boinc_emu_input.py SCENARIO DIR

DIR receives client_state.xml, global_prefs.xml and cc_config.xml. Run the
emulator from DIR with `--infile_prefix ./ --outfile_prefix ./ --duration
SECONDS --delta SECONDS` (printed on stdout as one line); the figures are in
DIR/results.txt.

What the emulator cannot take is dropped, as its reader would: it has no
checkpoint interval (its tasks checkpoint at every step), no ram limit per
task and no mean connected period (always 1 h, as in our format).
"""
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


def app_xml(pname, k, app, flops):
    opts = app["opts"]
    ncpus = float(opts.get("ncpus", 1))
    fpops = app["hours"] * HOUR * flops   # C is CPU hours: a task's flops whatever its width
    name = f"{pname}_app{k}"
    limit = f"        <max_concurrent>{opts['max_concurrent']}</max_concurrent>\n" if "max_concurrent" in opts else ""
    return (f"    <app>\n        <name>{name}</name>\n"
            f"        <latency_bound>{app['delay'] * HOUR:.0f}</latency_bound>\n"
            f"        <fpops_est>{fpops:.6e}</fpops_est>\n"
            f"        <fpops><mean>{fpops:.6e}</mean><std_dev>0</std_dev></fpops>\n"
            f"        <weight>{opts.get('weight', 1)}</weight>\n{limit}    </app>\n"
            f"    <app_version>\n        <app_name>{name}</app_name>\n        <version_num>1</version_num>\n"
            f"        <avg_ncpus>{ncpus:g}</avg_ncpus>\n        <flops>{flops * ncpus:.6e}</flops>\n"
            f"    </app_version>\n")


def project_xml(name, p, flops):
    opts = p["opts"]
    avail = ""
    if float(opts.get("avail_frac", 1)) < 1:
        lam = float(opts.get("avail_lambda_hours", 1)) * HOUR
        avail = f"    <available><frac>{opts['avail_frac']}</frac><lambda>{lam:.0f}</lambda></available>\n"
    head = (f"<project>\n    <master_url>http://{name}/</master_url>\n    <project_name>{name}</project_name>\n"
            f"    <resource_share>{p['share']:g}</resource_share>\n{avail}</project>\n")
    return head + "".join(app_xml(name, k, a, flops) for k, a in enumerate(p["apps"]))


def state_xml(keys, projects):
    flops = num(keys, "cpu_gflops") * 1e9
    on, active = num(keys, "on_frac"), num(keys, "active_frac")
    return ("<client_state>\n<host_info>\n"
            f"    <p_ncpus>{int(num(keys, 'ncpus'))}</p_ncpus>\n    <p_fpops>{flops:.6e}</p_fpops>\n"
            f"    <m_nbytes>{num(keys, 'ram_gb') * 1e9:.0f}</m_nbytes>\n</host_info>\n<time_stats>\n"
            f"    <on_frac>{on:g}</on_frac>\n    <connected_frac>{num(keys, 'connected_frac'):g}</connected_frac>\n"
            f"    <active_frac>{active:g}</active_frac>\n    <gpu_active_frac>{active:g}</gpu_active_frac>\n"
            f"    <on_lambda>{num(keys, 'on_lambda_hours') * HOUR:.0f}</on_lambda>\n"
            f"    <active_lambda>{num(keys, 'active_lambda_hours') * HOUR:.0f}</active_lambda>\n"
            f"    <connected_lambda>{HOUR:.0f}</connected_lambda>\n</time_stats>\n"
            + "".join(project_xml(n, p, flops) for n, p in projects.items()) + "</client_state>\n")


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


def main():
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

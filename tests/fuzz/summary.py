"""The summary of a fuzz run: counts by outcome, configuration and reason, fallbacks,
op coverage against the CPU lowering registry, and the tolerance margins."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

ORDER = ("ok", "refused", "wrong", "crash", "hang", "segfault", "invalid")


def coverage(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Native ops reached (CPU backend reports) against every registered CPU lowering."""
    from ziggurat.backends.cpu.lowering.registry import lowered_keys

    reached: Counter[str] = Counter()
    fusions: Counter[str] = Counter()
    for r in results:
        for o in r["result"]["outcomes"]:
            if o["config"].startswith("cpu-"):
                reached.update(set(o["native"]))
                fusions.update({k: v for k, v in o["fusions"].items()})
    registered = lowered_keys()
    aten = sorted(k for k in reached if k in set(registered))
    return {"native_reached": aten, "native_reached_count": len(aten),
            "other_native": sorted(k for k in reached if k not in set(registered)),
            "registered_count": len(registered),
            "not_reached": sorted(set(registered) - set(aten)), "fusions": dict(fusions)}


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summarize(results: list[dict[str, Any]], elapsed: float, args: dict[str, Any],
              minimized: list[dict[str, Any]]) -> dict[str, Any]:
    worst: Counter[str] = Counter()
    by_config: dict[str, Counter[str]] = defaultdict(Counter)
    refusals: Counter[str] = Counter()
    call_refusals: Counter[str] = Counter()
    fallbacks: Counter[tuple[str, str, str]] = Counter()
    crashes: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    failing: dict[str, list[str]] = defaultdict(list)
    ratios: list[float] = []
    compared = masked = 0
    invalid: list[str] = []
    spec_errors: dict[str, str] = {}
    unchecked_fresh = 0
    features: Counter[str] = Counter()
    for r in results:
        res = r["result"]
        spec_errors.update(r.get("spec_errors", {}))
        features.update(["aliased inputs"] if r.get("aliased") else [])
        features.update(f"layout {x}" for x in r.get("layouts", []))
        features.update(f"input rank {x}" for x in r.get("ranks", []))
        features.update(f"input {x}" for x in r.get("dtypes", []))
        features.update([f"{r['threads']} native threads"] if "threads" in r else [])
        if res["invalid"]:
            worst["invalid"] += 1
            invalid.append(f"{r['program']}: {res['invalid'][:160]}")
            continue
        unchecked_fresh += not res["fresh_checked"]
        kinds = [o["kind"] for o in res["outcomes"]] or ["ok"]
        worst[max(kinds, key=ORDER.index)] += 1
        for o in res["outcomes"]:
            by_config[o["config"]][o["kind"]] += 1
            family = o["config"].split("-")[0]
            for op, reasons in o["fallbacks"].items():
                for reason in reasons:
                    fallbacks[(family, op, reason[:140])] += 1
            for reason in o["call_refusals"]:
                call_refusals[reason] += 1
            compared += o["compared"]
            masked += o["masked"]
            if o["kind"] == "ok" and o["compared"]:
                ratios.append(o["ratio"])
            if o["kind"] == "refused":
                refusals[o["reason"]] += 1
            elif o["kind"] == "crash":
                crashes[o["reason"]] += 1
            elif o["kind"] == "wrong":
                wrong[f"{family}: {o['reason']}"] += 1
            if o["kind"] in ("wrong", "crash", "hang", "segfault"):
                threads = f", {o['threads']} threads" if o.get("threads", 1) != 1 else ""
                failing[o["kind"]].append(f"{r['program']} [{o['config']}{threads}] {o['reason'][:100]}")
    cov = coverage(results)
    data = {
        "args": {k: v for k, v in args.items()}, "programs": len(results), "elapsed_s": round(elapsed, 1),
        "by_outcome": {k: worst.get(k, 0) for k in ORDER},
        "by_config": {c: dict(v) for c, v in sorted(by_config.items())},
        "refusals": dict(refusals.most_common()), "call_refusals": dict(call_refusals.most_common()),
        "crashes": dict(crashes.most_common()), "wrong": dict(wrong.most_common()),
        "fallbacks": [{"backend": f, "op": op, "reason": why, "count": n} for (f, op, why), n in fallbacks.most_common()],
        "failing": dict(failing), "invalid": invalid, "spec_errors": spec_errors,
        "fresh_inputs_unchecked": unchecked_fresh,
        "tolerance": {"compared_elements": compared, "masked_elements": masked,
                      "ratio_max": max(ratios, default=0.0), "ratio_p99": _percentile(ratios, 0.99),
                      "ratio_p50": _percentile(ratios, 0.5)},
        "coverage": cov, "minimized": minimized, "classes": distinct_classes(minimized), "features": dict(sorted(features.items())),
    }
    return {"data": data, "markdown": markdown(data)}


def distinct_classes(minimized: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Minimized failures grouped by kind, backend family and the op set left."""
    groups: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}
    for m in minimized:
        if "repro" not in m:
            continue
        key = (m["kind"], m["config"].split("-")[0], tuple(sorted(set(m["ops"]))))
        g = groups.setdefault(key, {"kind": key[0], "backend": key[1], "ops": list(key[2]), "repros": [],
                                    "configs": set()})
        g["repros"].append(m["repro"])
        g["configs"].add(m["config"])
    out = list(groups.values())
    for g in out:
        g["configs"] = sorted(g["configs"])
    return out


def _table(rows: list[tuple[Any, ...]], header: tuple[str, ...]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


def markdown(d: dict[str, Any]) -> str:
    a = d["args"]
    lines = [f"# Ziggurat fuzz run: seed {a.get('seed')}, {d['programs']} programs, profile {a.get('profile')}",
             "", f"{d['elapsed_s']} s on {a.get('jobs')} worker(s) "
             f"({d['programs'] / max(d['elapsed_s'], 1e-9) * 60:.0f} programs/min)", "",
             "## Programs by worst outcome", ""]
    lines += _table([(k, v) for k, v in d["by_outcome"].items()], ("outcome", "programs"))
    kinds = [k for k in ORDER if k != "invalid"]
    lines += ["", "Programs with: " + ", ".join(f"{k} {v}" for k, v in d["features"].items()), "",
              "## By configuration", ""]
    lines += _table([(c, *[v.get(k, 0) for k in kinds]) for c, v in d["by_config"].items()], ("config", *kinds))
    for title, key in (("Wrong answers", "wrong"), ("Crashes", "crashes"), ("Refusals (clean ZigguratError)", "refusals"),
                       ("Call-time refusals (then rerun with contiguous copies)", "call_refusals")):
        if d[key]:
            lines += ["", f"## {title}", ""]
            lines += _table([(n, r) for r, n in d[key].items()], ("count", "reason"))
    if d["fallbacks"]:
        lines += ["", "## Fallbacks (ops run through torch), by backend, op and reason", ""]
        lines += _table([(f["count"], f["backend"], f["op"], f["reason"]) for f in d["fallbacks"][:80]],
                        ("count", "backend", "op", "reason"))
    for kind, items in d["failing"].items():
        lines += ["", f"## {kind} ({len(items)})", ""] + [f"- {x}" for x in items[:60]]
    if d["minimized"]:
        lines += ["", f"## Distinct failure classes after minimization ({len(d['classes'])})", ""]
        for g in d["classes"]:
            lines.append(f"- {g['kind']} on {g['backend']} ({', '.join(g['configs'])}): ops {', '.join(g['ops'])}: "
                         f"`{g['repros'][0]}`" + (f" (+{len(g['repros']) - 1} more)" if len(g["repros"]) > 1 else ""))
        errors = [m for m in d["minimized"] if "repro" not in m]
        lines += [f"- minimization failed for `{m['failure']}`: {m.get('error', '')[:200]}" for m in errors]
    t = d["tolerance"]
    lines += ["", "## Tolerance", "",
              f"{t['compared_elements']} elements compared, {t['masked_elements']} masked as unstable "
              f"({t['masked_elements'] / max(1, t['compared_elements'] + t['masked_elements']):.2%}); "
              f"largest |z - eager| / tol among passing configs: max {t['ratio_max']:.3g}, "
              f"p99 {t['ratio_p99']:.3g}, median {t['ratio_p50']:.3g}"]
    c = d["coverage"]
    lines += ["", "## Coverage", "",
              f"{c['native_reached_count']} of {c['registered_count']} registered CPU lowerings reached natively; "
              f"fused patterns: {', '.join(f'{k} x{v}' for k, v in sorted(c['fusions'].items()))}"]
    if d["invalid"] or d["spec_errors"]:
        lines += ["", "## Generator problems", ""] + [f"- invalid: {x}" for x in d["invalid"][:20]]
        lines += [f"- spec error {k}: {v}" for k, v in d["spec_errors"].items()]
    if d["fresh_inputs_unchecked"]:
        lines.append(f"- {d['fresh_inputs_unchecked']} programs not checked on call-time inputs (eager refused them)")
    return "\n".join(lines) + "\n"

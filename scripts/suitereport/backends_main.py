"""scripts/backends: the backends chosen by their manifests' fields, in the suite's order, written the way a
shell script or a CMake command line needs them, so that no script keeps a list of backends of its own.

  --where FIELD=V1,V2   the field's value (or, for a list, one of its items) is one of V1, V2
  --where FIELD         the field is set (not absent, false or empty)
  --where '!COND'       the condition does not hold; several --where must all hold
With --suite BIN, only what that suite has built, from `BIN --list --format json`; --runnable and
--variants (backend:variant items; --fast leaves out the manifest's "slow" variants, --slow keeps only them,
--scaling only its "scaling" ones) then apply.
Output: comma-separated names (default), --cmake-off (-DWITH_<NAME>=OFF for every backend NOT chosen),
--cmake-on (-DWITH_<NAME>=ON for the chosen ones), --libraries (their "host_libraries" as an ERE).
"""

import argparse
import json
import subprocess

from . import cli, manifests
from .load import ReportError


def _values(manifest, field):
    value = manifest.get(field)
    if value is None or value is False or value == "" or value == []:
        return []
    return [str(v) for v in value] if isinstance(value, list) else ["true" if value is True else str(value)]


def _holds(manifest, condition):
    negate = condition.startswith("!")
    field, eq, wanted = condition.lstrip("!").partition("=")
    if not field:
        raise ReportError(f"--where '{condition}': expected FIELD, FIELD=V1,V2 or !...")
    have = _values(manifest, field)
    ok = bool(set(have) & set(wanted.split(","))) if eq else bool(have)
    return ok != negate


def _suite_list(binary):
    try:
        done = subprocess.run([binary, "--list", "--format", "json"], capture_output=True, text=True, check=False)
    except OSError as e:
        raise ReportError(f"--suite '{binary}': cannot run it ({e.strerror})") from e
    if done.returncode != 0:
        raise ReportError(f"--suite '{binary}': --list --format json exited {done.returncode}: "
                          f"{done.stderr.strip()}")
    try:
        return json.loads(done.stdout)["backends"]
    except (ValueError, KeyError, TypeError) as e:
        raise ReportError(f"--suite '{binary}': --list --format json is not the expected JSON ({e})") from e


def _variants(args, chosen, listed):
    items = []
    for b in listed:
        if b["name"] not in chosen or not b.get("built"):
            continue
        slow, scaling = _values(chosen[b["name"]], "slow"), _values(chosen[b["name"]], "scaling")
        for v in b.get("variants", []):
            if (args.fast and v["name"] in slow) or (args.slow and v["name"] not in slow):
                continue
            if args.scaling and v["name"] not in scaling:
                continue
            items.append(f"{b['name']}:{v['name']}")
    return items


def main(argv):
    p = cli.Parser(prog="backends", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--where", action="append", default=[], metavar="COND")
    p.add_argument("--suite", metavar="BIN")
    p.add_argument("--runnable", action="store_true")
    p.add_argument("--variants", action="store_true")
    pick = p.add_mutually_exclusive_group()
    for flag in ("--fast", "--slow", "--scaling"):
        pick.add_argument(flag, action="store_true")
    out = p.add_mutually_exclusive_group()
    for flag in ("--cmake-off", "--cmake-on", "--libraries"):
        out.add_argument(flag, action="store_true")
    args = p.parse_args(argv)
    if (args.runnable or args.variants) and not args.suite:
        p.error("--runnable and --variants need --suite BIN")
    every = manifests.manifests()
    chosen = {n: m for n, m in every.items() if all(_holds(m, c) for c in args.where)}
    if args.suite:
        listed = _suite_list(args.suite)
        keep = {b["name"] for b in listed if b.get("built") and (b.get("runnable") or not args.runnable)}
        chosen = {n: m for n, m in chosen.items() if n in keep}
        if args.variants:
            print(",".join(_variants(args, chosen, listed)))
            return cli.EXIT_OK
    if args.cmake_off:
        print(" ".join(manifests.cmake_off(chosen)))
    elif args.cmake_on:
        print(" ".join(f"-DWITH_{n.upper()}=ON" for n in chosen))
    elif args.libraries:
        print("|".join(lib for m in chosen.values() for lib in _values(m, "host_libraries")))
    else:
        print(",".join(chosen))
    return cli.EXIT_OK

"""Compares one cudojo report (JSON on stdin) with a corpus file's expectation (argv[1]), e.g.
`verdict=wrong_answer finding=shared_race@11 output=hello`. Prints what the judge gave
(`verdict(finding@line,...)`) and `ok` or `MISMATCH: why`. Used by gpu-check.sh and
languages-check.sh."""
import json
import sys


def parse_expectation(text):
    # `output=` may hold spaces; everything else is one word per key.
    head, _, output = text.partition(" output=")
    want = dict(kv.split("=", 1) for kv in head.split() if "=" in kv)
    if output:
        want["output"] = output
    return want


def main():
    want = parse_expectation(sys.argv[1])
    report = json.load(sys.stdin)
    findings = report["findings"]
    problems = []
    if report["verdict"] != want["verdict"]:
        problems.append("verdict")
    if "finding" in want:
        code, _, line = want["finding"].partition("@")
        lines = [f.get("line") for f in findings if f["code"] == code]
        if not lines:
            problems.append("finding " + code)
        elif line and int(line) not in lines:
            problems.append("%s at line %s, not %s" % (code, line, lines))
    if "error" in want and report.get("error_name") != want["error"]:
        problems.append("error %s" % report.get("error_name"))
    if "output" in want and want["output"] not in report["output"]["captured"]:
        problems.append("output")
    got = report["verdict"]
    if findings:
        got += "(" + ",".join(f["code"] + ("@%d" % f["line"] if f.get("line") else "") for f in findings) + ")"
    print("%s %s" % (got, "ok" if not problems else "MISMATCH: " + "; ".join(problems)))


if __name__ == "__main__":
    main()

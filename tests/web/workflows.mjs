// The browser test's workflows: /bin/sh stages that follow docs/stage-protocol.md (progress,
// metric, message and output lines appended to $LONGHAUL_EVENTS), written into a temp dir.
import { writeFileSync } from "node:fs";
import path from "node:path";

const EVENT = (json) => `echo '${json}' >> "$LONGHAUL_EVENTS"`;

export function workflows(dir) {
  const file = (name, text) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const flakyMark = path.join(dir, "flaky.failed-once");
  const flakyRelease = path.join(dir, "flaky.release");

  const quick = file("quick.yaml", `name: ui-quick
params: {n: "0"}
stages:
  hello:
    run: [/bin/sh, -c, "echo hello \${params.n}"]
`);

  // 0.3 s per item: progress with a total (rate, ETA), a log line, a \\r progress line, a metric.
  const slowScript = [
    "i=0",
    "while [ $i -lt $1 ]; do",
    "  i=$((i+1))",
    `  echo "{\\"progress\\": {\\"done\\": $i, \\"total\\": $1, \\"unit\\": \\"items\\"}}" >> "$LONGHAUL_EVENTS"`,
    `  echo "{\\"metric\\": {\\"name\\": \\"loss\\", \\"value\\": $((1000 / i)), \\"step\\": $i}}" >> "$LONGHAUL_EVENTS"`,
    '  echo "tick $i"',
    "  printf 'spin 1%%\\rspin 50%%\\rspin 100%%\\n'",
    "  sleep 0.3",
    "done",
  ].join("\n");
  const slow = file("slow.yaml", `name: ui-slow
params: {total: "200"}
defaults: {timeout: 30m}
stages:
  count:
    description: counts slowly, with progress, a log line and a metric per item
    run: [/bin/sh, -c, ${JSON.stringify(slowScript)}, sh, "\${params.total}"]
`);

  // Fails its first attempt (exit 3); the next one reports progress and waits for the test.
  const flakyScript = [
    `if [ ! -f ${flakyMark} ]; then touch ${flakyMark}; echo "first attempt: failing on purpose"; exit 3; fi`,
    EVENT('{"progress": {"done": 1, "total": 2, "unit": "steps"}}'),
    EVENT('{"message": {"text": "waiting for the test to release me"}}'),
    `while [ ! -f ${flakyRelease} ]; do sleep 0.1; done`,
    EVENT('{"progress": {"done": 2, "total": 2, "unit": "steps"}}'),
    'echo "second attempt: done"',
  ].join("\n");
  const flaky = file("flaky.yaml", `name: ui-flaky
stages:
  flaky:
    run: [/bin/sh, -c, ${JSON.stringify(flakyScript)}]
  after:
    needs: [flaky]
    run: [/bin/sh, -c, "echo after"]
`);

  const evil = "<img src=x onerror=alert(1)>";
  const markupScript = [
    `echo '${evil}'`,
    "echo '<script>alert(2)</script>'",
    EVENT(`{"message": {"level": "warn", "text": "${evil}"}}`),
    EVENT(`{"output": {"name": "html", "value": "${evil} as output"}}`),
    EVENT(`{"metric": {"name": "score", "value": 1}}`),
  ].join("\n");
  const markup = file("markup.yaml", `name: ui-markup
description: "<b>not bold</b> ${evil}"
params: {note: "${evil}"}
stages:
  b_img_onerror_alert:
    description: "${evil}"
    run: [/bin/sh, -c, ${JSON.stringify(markupScript)}]
`);

  // Two stages: prep does not use the param (a pivot reuses it), greet does.
  const pivotable = file("pivotable.yaml", `name: ui-pivot
params: {greeting: hello}
stages:
  prep:
    run: [/bin/sh, -c, "echo preparing; ${EVENT('{"progress": {"done": 5, "total": 5, "unit": "files"}}').replace(/"/g, '\\"')}"]
  greet:
    needs: [prep]
    run: [/bin/sh, -c, "echo \${params.greeting}, world"]
`);

  // One GPU for about 1.5 s per attempt (the fake NVML sampled every 100 ms meanwhile); the
  // first attempt fails and is retried at once, so the stage has two attempts' telemetry.
  const gpuScript = 'sleep 1.5; if [ "$LONGHAUL_ATTEMPT" = 1 ]; then echo "attempt 1: failing"; exit 3; fi';
  const gpu = file("gpu.yaml", `name: ui-gpu
stages:
  train:
    resources: {cpus: 0.5, gpus: 1}
    retry: {limit: 1, backoff: 1s}
    run: [/bin/sh, -c, ${JSON.stringify(gpuScript)}]
`);

  return { quick, slow, flaky, flakyRelease, markup, pivotable, gpu };
}

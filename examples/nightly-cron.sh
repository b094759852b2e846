#!/usr/bin/env bash
# Nightly `orf mine` from cron: mine yesterday's agent sessions into the team's playbook
# repository and open a PR with the new candidates.
#
# crontab -e:
#   15 3 * * *  $HOME/src/playbooks/examples/nightly-cron.sh >> $HOME/.orf/nightly.log 2>&1
#
# Needs: orf installed (pip install orf-pipeline), git, GEMINI_API_KEY in ~/.orf/env (or run
# offline with ORF_BACKEND=heuristic), and gh logged in for --open.
set -euo pipefail

REPO="${ORF_REPO:-$HOME/src/playbooks}"      # git checkout holding experiences/
STORE="$REPO/experiences"
LEDGER="${ORF_LEDGER:-$HOME/.orf/ledger.db}"  # outside the repo: never committed

# shellcheck disable=SC1091
[ -f "$HOME/.orf/env" ] && . "$HOME/.orf/env"

cd "$REPO"
git checkout -q main && git pull -q --ff-only

# Exit codes: 0 ok, 1 error (e.g. another run holds the lock), 3 partial (some inputs failed).
set +e
orf mine --default-locations --batch --quiet --store "$STORE" --ledger "$LEDGER" \
    --lock-timeout 600 --json > "$HOME/.orf/last-mine.json"
status=$?
set -e
if [ "$status" -eq 1 ]; then
    echo "orf mine failed; see $HOME/.orf/last-mine.json" >&2
    exit 1
fi

# Nothing new: no branch, no PR.
if [ -z "$(git status --porcelain -- "$STORE")" ]; then
    echo "no new candidate playbooks"
    exit 0
fi

orf pr --store "$STORE" --ledger "$LEDGER" --push --open \
    --branch "orf/nightly-$(date -u +%Y%m%d)" --body-file "$HOME/.orf/last-pr.md"
git checkout -q main

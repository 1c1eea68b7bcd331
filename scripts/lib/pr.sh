# shellcheck shell=bash
# Sourced by scripts/qualify-pr.sh and scripts/outdated-prs.sh: the steps
# that open or update one pull request per branch. The caller sets GH (the
# GitHub CLI) and SUMMARY (the file the job summary is appended to).

log() { printf '==> %s\n' "$*" >&2; }

# bot_git runs git as the bot that commits the workflows' changes.
bot_git() { git -c user.name=kbuild-bot -c user.email=kbuild-bot@users.noreply.github.com "$@"; }

# pr_publish BRANCH BASE TITLE BODY_FILE [MESSAGE] commits what is staged
# with TITLE (and MESSAGE as the commit's next paragraph), pushes it to
# BRANCH on origin (forced: the branch is the bot's), updates the pull
# request open for BRANCH with TITLE and the body, or opens one into BASE
# when none is open (never a second), adds "- TITLE" to the summary and
# checks BASE out again.
pr_publish() {
	local branch=$1 base=$2 title=$3 body=$4 number
	local msg=(-m "$title")
	[ -n "${5:-}" ] && msg+=(-m "$5")
	bot_git commit -q "${msg[@]}"
	bot_git push -q --force origin "HEAD:refs/heads/$branch"
	number=$("$GH" pr list --head "$branch" --state open --json number --jq '.[0].number // empty')
	if [ -n "$number" ]; then
		log "updating pull request #$number"
		"$GH" pr edit "$number" --title "$title" --body-file "$body"
	else
		log "opening a pull request for $branch"
		"$GH" pr create --head "$branch" --base "$base" --title "$title" --body-file "$body"
	fi
	echo "- $title" >>"$SUMMARY"
	bot_git checkout -q "$base"
}

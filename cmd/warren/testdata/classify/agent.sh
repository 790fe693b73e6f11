# what an agent's turn looks like: inspect, patch, test
cd /work/repo
git status --short
git apply --3way /tmp/fix.patch
git log --all --oneline | head -n 3
git --git-dir=/work/repo/.git rev-parse HEAD
grep -rn TODO src/ || true
ruby -e 'puts 1'
python3 -m pytest -q
run_tests() { go test ./...; }
run_tests
/usr/bin/git diff --stat
"$EDITOR" notes.txt
cat missing.txt

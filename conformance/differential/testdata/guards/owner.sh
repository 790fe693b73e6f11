# what a session creates belongs to its user (id), so test -w, stat and ls
# agree with it; found running savelog, which checks [ -w "$dir" ]
mkdir d; touch f; echo x > d/g; ln -s f l
[ -w d ] && [ -w f ] && [ -O f ] && [ -G d/g ] && echo owned
stat -c '%u %g' d f d/g
ls -ln f | cut -d' ' -f1-4
find . -uid 1000 -name '[dfg]' | sort

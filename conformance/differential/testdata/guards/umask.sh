# umask applies to files and directories that resident commands create
umask 077
touch f; mkdir d; echo x > r
ls -ld f d r | cut -c1-10
umask 022
touch g; ls -l g | cut -c1-10

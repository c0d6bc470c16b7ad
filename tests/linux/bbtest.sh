# SPDX-License-Identifier: MIT
# bbtest.sh — busybox checks, run by tests/qemu/test_linux.py as
#     init=/bin/busybox -- sh /etc/bbtest.sh
# in one boot.  Each check prints one line: "bb NAME: ok" or "bb NAME: FAILED: ...".
# t NAME WANT CMD: run CMD in a subshell (busybox sh -c), compare its output with WANT.
t() {
    name=$1
    want=$2
    shift 2
    got=$(sh -c "$*" 2>&1)
    st=$?
    if [ "$got" = "$want" ]; then
        echo "bb $name: ok"
    else
        echo "bb $name: FAILED: got [$got] (status $st), want [$want]"
    fi
}
t echo 'hi there' 'echo hi there'
t pipe 3 'echo a b c | wc -w'
t pipe3 'B' 'echo a b c | tr a-z A-Z | cut -d" " -f2'
t redirect hello 'echo hello > /tmp/f; cat /tmp/f'
t append '1 2' 'echo 1 > /tmp/g; echo 2 >> /tmp/g; cat /tmp/g | xargs echo'
t stdin_redirect 2 'printf "x\ny\n" > /tmp/h; wc -l < /tmp/h'
t stderr_redirect 'err' 'ls /nope 2>/dev/null; echo err'
t subst 'x=sub' 'v=$(echo sub); echo x=$v'
t for_loop '1 2 3' 'for i in 1 2 3; do echo $i; done | xargs echo'
t while_loop 3 'i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i'
t status '1 0 7' 'false; a=$?; true; b=$?; (exit 7); c=$?; echo $a $b $c'
t and_or 'yes' 'false && echo no || echo yes'
t ls_l '-r-xr-xr-x' 'ls -l /bin/busybox | cut -c1-10'
t ls_bin 'busybox' 'ls /bin | grep -x busybox'
t cat 'root:x:0:0:root:/:/bin/sh' 'cat /etc/passwd | head -n 1'
t wc 3 'printf "a\nb\nc\n" | wc -l'
t grep two 'printf "one\ntwo\nthree\n" | grep tw'
t sort '1 2 3' 'printf "3\n1\n2\n" | sort | xargs echo'
t head a 'printf "a\nb\n" | head -n 1'
t tail c 'printf "a\nb\nc\n" | tail -n 1'
t seq '1 2 3 4 5' 'seq 5 | xargs echo'
t sleep done 'sleep 0.2; echo done'
t test yes 'test -d /tmp && test ! -e /nope && [ 3 -gt 2 ] && echo yes'
t tmp_tree 'b' 'mkdir -p /tmp/d/e && echo x > /tmp/d/e/a && mv /tmp/d/e/a /tmp/d/b && ls /tmp/d | grep -v e; rm -r /tmp/d'
t tmp_gone 'gone' 'test -e /tmp/d || echo gone'
t cp abc 'echo abc > /tmp/c1; cp /tmp/c1 /tmp/c2; cat /tmp/c2; rm /tmp/c1 /tmp/c2'
t cd /tmp 'cd /tmp && pwd'
t touch 'yes' 'touch /tmp/tt && test -f /tmp/tt && rm /tmp/tt && echo yes'
t background 'bg fg' '{ sleep 0.1 & echo bg; wait; echo fg; } | xargs echo'
t kill 143 '{ sleep 10 & kill $!; wait $!; echo $?; } 2>/dev/null'
t awk 6 'echo "1 2 3" | awk "{print \$1+\$2+\$3}"'
t sed 'a-b' 'echo a+b | sed "s/+/-/"'
t find '/tmp/fd/x' 'mkdir -p /tmp/fd; touch /tmp/fd/x; find /tmp/fd -name x; rm -r /tmp/fd'
t env '/usr/bin:/bin' 'echo $PATH'
t uname zerotick 'uname -s'
t id 0 'id -u'
t expr 7 'expr 3 + 4'
t uniq 'a b' 'printf "a\na\nb\n" | uniq | xargs echo'
t self_exe '/bin/busybox' 'readlink /proc/self/exe'
t heredoc 'in here' 'cat <<END
in here
END'
t function 'f:x' 'f() { echo f:$1; }; f x'
t case 'two' 'case b in a) echo one;; b) echo two;; esac'
t exit_status 4 'sh -c "exit 4"; echo $?'
t chmod x 'echo > /tmp/m; chmod 755 /tmp/m && test -x /tmp/m && echo x; rm /tmp/m'
t symlink hi 'echo hi > /tmp/s1; ln -s s1 /tmp/s2 && cat /tmp/s2; rm /tmp/s1 /tmp/s2'
t tar etc/passwd 'cd / && tar cf /tmp/t.tar etc/passwd && tar tf /tmp/t.tar; rm /tmp/t.tar'
t gzip 'root:x:0:0:root:/:/bin/sh' 'gzip -c /etc/passwd > /tmp/p.gz && zcat /tmp/p.gz | head -n 1; rm /tmp/p.gz'
t dd 3072 'dd if=/dev/zero of=/tmp/z bs=1k count=3 2>/dev/null; wc -c < /tmp/z; rm /tmp/z'
t md5sum 'd41d8cd98f00b204e9800998ecf8427e  -' 'printf "" | md5sum'
t stat_size 10 'printf 0123456789 > /tmp/s; stat -c %s /tmp/s; rm /tmp/s'
t diff '+root:x:0:' 'diff /etc/passwd /etc/group | grep "^+r"'
t devnull '' 'echo gone > /dev/null; cat /dev/null'
t enospc 'ENOSPC ok' '{ head -c 9000000 /dev/zero > /tmp/big 2>/dev/null || echo ENOSPC; rm /tmp/big && echo ok; } | xargs echo'
t tmp_empty '' 'rm /tmp/f /tmp/g /tmp/h && ls /tmp'
echo "bb: all checks ran"

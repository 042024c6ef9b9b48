#!/bin/sh
# cstring.sh FILE: FILE's text as the lines of one C string literal, for an
# #include inside an initializer (the SVG's script and style).
exec sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' -e 's/^/"/' -e 's/$/\\n"/' "$1"

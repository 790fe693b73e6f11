#!/bin/bash
# bash's support/zecho.c: the arguments, one blank between, no escapes
IFS=' '
printf '%s\n' "$*"

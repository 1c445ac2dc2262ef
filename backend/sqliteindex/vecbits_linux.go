package sqliteindex

import "syscall"

const mapPopulate = syscall.MAP_POPULATE

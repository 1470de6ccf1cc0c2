package changes

import "syscall"

func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctimespec.Sec*1e9 + int64(st.Ctimespec.Nsec) }

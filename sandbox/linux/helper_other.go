//go:build !linux

package linux

import (
	"fmt"
	"os"
)

// HelperMain is the Linux sandbox helper; elsewhere the helper entry point
// only reports that it does not exist on this system.
func HelperMain(args []string) {
	fmt.Fprintln(os.Stderr, "warden: the sandbox helper runs only on Linux")
	os.Exit(125)
}

package patch

import (
	"testing"

	"github.com/wardenhq/warden/internal/testhome"
)

// TestMain keeps the journals of Disk{} (config.StateDir()/journal) out of
// the user's real state directory.
func TestMain(m *testing.M) { testhome.Main(m) }

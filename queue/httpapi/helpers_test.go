package httpapi_test

import (
	"io"
	"log/slog"
	"os"
)

// quietLog discards logs unless WAITROOM_TEST_LOG is set.
func quietLog() *slog.Logger {
	if os.Getenv("WAITROOM_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

package bench

import (
	"time"

	"github.com/schollz/progressbar/v3"
)

// bar draws a progress bar on the Env's progress writer (stderr), or nothing.
func (e *Env) bar(total int, desc string) *progressbar.ProgressBar {
	if e.Progress == nil {
		return progressbar.DefaultSilent(int64(total))
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(e.Progress),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

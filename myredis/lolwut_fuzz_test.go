package myredis

import (
	"encoding/binary"
	"strings"
	"testing"
)

// FuzzLolwutDraw draws Schotter and the skyline at any size LOLWUT accepts
// (kept small) with random numbers from the input: no panic, and the text has
// one line per row of characters.
func FuzzLolwutDraw(f *testing.F) {
	f.Add(uint16(66), uint8(8), uint8(12), []byte{1, 2, 3, 4})
	f.Add(uint16(1), uint8(1), uint8(1), []byte{})
	f.Add(uint16(3), uint8(200), uint8(3), []byte{255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, cols uint16, perRow, perCol uint8, seed []byte) {
		c, r, k := int(cols%120)+1, int(perRow)%200+1, int(perCol)%20+1
		i := 0
		rnd := func() int32 {
			if len(seed) < 4 {
				return 12345
			}
			v := binary.LittleEndian.Uint32(seed[i%(len(seed)-3):])
			i++
			return int32(v & 0x7fffffff)
		}
		canvas := drawSchotter(c, r, k, rnd)
		if got, want := strings.Count(renderBraille(canvas), "\n"), (canvas.height+3)/4; got < want-1 || got > want {
			t.Fatalf("%d newlines for a canvas %d tall", got, canvas.height)
		}
		sky := newCanvas(c, k, 3)
		drawSkyline(sky, rnd)
		if got := strings.Count(renderColors(sky), "\n"); got != k-1 {
			t.Fatalf("%d newlines for %d rows", got, k)
		}
	})
}

package myredis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// LOLWUT as Redis 7.0.15 draws it (its lolwut.c, lolwut5.c, lolwut6.c). A
// 7.0 server answers plain LOLWUT with its version line only; VERSION 5 draws
// Georg Nees's "Schotter" in Braille characters, VERSION 6 a city skyline in
// terminal colours. Both use Redis's integer and single-precision arithmetic,
// so for the same random numbers the drawing is Redis's to the pixel: Schotter
// with one or two rows of squares uses none and is byte-exact, the skyline is
// random. Every handler runs on the executor goroutine.

func commandsLolwut() []*command {
	return []*command{
		{name: "lolwut", arity: -1, flags: flagReadonly, fn: cmdLolwut},
	}
}

// lolwutMaxCells bounds a Schotter drawing's characters. Redis draws up to
// 1000 columns by 200x200 squares (an 800 MB canvas and a 300 MB reply), which
// would hold the executor for seconds; MyRedis refuses beyond a 3 MB reply.
const lolwutMaxCells = 1 << 20

func cmdLolwut(x *Ctx) {
	args := x.args[1:]
	version := 7 // redisVersion's major: neither 5 nor 6
	if len(args) >= 2 && eqFold(args[0], "version") {
		v, ok := parseRedisInt(args[1])
		if !ok {
			x.err(msgNotInt)
			return
		}
		version = lolwutVersion(uint32(v)) // Redis prints it with %u
		args = args[2:]
	}
	switch version {
	case 5:
		lolwut5(x, args)
	case 6:
		lolwut6(x, args)
	default:
		x.w.Verbatim("Redis ver. " + redisVersion + "\n")
	}
}

// lolwutVersion is the drawing Redis picks for "<v>.0.0": 5 and 6 have one.
func lolwutVersion(v uint32) int {
	if v == 5 || v == 6 {
		return int(v)
	}
	return 0
}

// lolwutArgs parses up to len(vals) optional integer arguments into vals and
// clamps each to [1, hi[i]]; false once it has written the error.
func lolwutArgs(x *Ctx, args [][]byte, vals []int64, hi []int64) bool {
	for i := range vals {
		if i < len(args) {
			n, ok := parseRedisInt(args[i])
			if !ok {
				x.err(msgNotInt)
				return false
			}
			vals[i] = n
		}
		vals[i] = min(max(vals[i], 1), hi[i])
	}
	return true
}

// lwCanvas is Redis's lwCanvas: one byte of colour per pixel.
type lwCanvas struct {
	width, height int
	pixels        []byte
}

func newCanvas(width, height int, bg byte) *lwCanvas {
	c := &lwCanvas{width: width, height: height, pixels: make([]byte, width*height)}
	if bg != 0 {
		for i := range c.pixels {
			c.pixels[i] = bg
		}
	}
	return c
}

func (c *lwCanvas) set(x, y int, color byte) {
	if x < 0 || x >= c.width || y < 0 || y >= c.height {
		return
	}
	c.pixels[x+y*c.width] = color
}

func (c *lwCanvas) get(x, y int) byte {
	if x < 0 || x >= c.width || y < 0 || y >= c.height {
		return 0
	}
	return c.pixels[x+y*c.width]
}

// line is Bresenham's, as Redis's lwDrawLine.
func (c *lwCanvas) line(x1, y1, x2, y2 int, color byte) {
	dx, dy := abs(x2-x1), abs(y2-y1)
	sx, sy := 1, 1
	if x1 >= x2 {
		sx = -1
	}
	if y1 >= y2 {
		sy = -1
	}
	err := dx - dy
	for {
		c.set(x1, y1, color)
		if x1 == x2 && y1 == y2 {
			return
		}
		e2 := err * 2
		if e2 > -dy {
			err -= dy
			x1 += sx
		}
		if e2 < dx {
			err += dx
			y1 += sy
		}
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// square is Redis's lwDrawSquare: size is the side, angle the rotation, in C's
// float (float32) and double steps.
func (c *lwCanvas) square(x, y int, size, angle float32, color byte) {
	size = float32(float64(size) / 1.4142135623)
	size = float32(math.Round(float64(size)))
	var px, py [4]int
	k := float32(math.Pi/4 + float64(angle))
	for j := range 4 {
		px[j] = int(math.Round(math.Sin(float64(k))*float64(size) + float64(x)))
		py[j] = int(math.Round(math.Cos(float64(k))*float64(size) + float64(y)))
		k = float32(float64(k) + math.Pi/2)
	}
	for j := range 4 {
		c.line(px[j], py[j], px[(j+1)%4], py[(j+1)%4], color)
	}
}

// schotterSize is the canvas of lwDrawSchotter: width, height, padding and
// the side of a square.
func schotterSize(cols, perRow, perCol int) (width, height, padding int, side float32) {
	width = cols * 2
	if width > 4 {
		padding = 2
	}
	side = float32(width-padding*2) / float32(perRow)
	height = int(float32(side*float32(perCol)) + float32(padding*2))
	return width, height, padding, side
}

// drawSchotter is Redis's lwDrawSchotter; rnd is C's rand() (0..2^31-1).
func drawSchotter(cols, perRow, perCol int, rnd func() int32) *lwCanvas {
	width, height, padding, side := schotterSize(cols, perRow, perCol)
	c := newCanvas(width, height, 0)
	const randMax = float32(math.MaxInt32)
	for y := range perCol {
		for x := range perRow {
			sx := int(float32(float32(float32(x)*side)+side/2) + float32(padding))
			sy := int(float32(float32(float32(y)*side)+side/2) + float32(padding))
			var angle float32
			if y > 1 { // rotate and move more as the rows go down
				r := func() float32 { return float32(float32(rnd())/randMax) / float32(perCol) * float32(y) }
				r1, r2, r3 := r(), r(), r()
				if rnd()%2 != 0 {
					r1 = -r1
				}
				if rnd()%2 != 0 {
					r2 = -r2
				}
				if rnd()%2 != 0 {
					r3 = -r3
				}
				angle = r1
				sx = int(float32(sx) + float32(r2*side)/3)
				sy = int(float32(sy) + float32(r3*side)/3)
			}
			c.square(sx, sy, side, angle, 1)
		}
	}
	return c
}

// renderBraille is lolwut5.c's renderCanvas: 2x4 pixels per Braille character.
func renderBraille(c *lwCanvas) string {
	var b strings.Builder
	b.Grow((c.width/2 + 1) * (c.height/4 + 1) * 3)
	for y := 0; y < c.height; y += 4 {
		for x := 0; x < c.width; x += 2 {
			bits := 0
			for i, p := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
				if c.get(x+p[0], y+p[1]) != 0 {
					bits |= 1 << i
				}
			}
			code := 0x2800 + bits // U+2800..U+28FF, three bytes of UTF-8
			b.WriteByte(byte(0xE0 | code>>12))
			b.WriteByte(byte(0x80 | (code>>6)&0x3F))
			b.WriteByte(byte(0x80 | code&0x3F))
		}
		if y != c.height-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// lolwut5 is LOLWUT VERSION 5 [columns] [squares-per-row] [squares-per-col].
func lolwut5(x *Ctx, args [][]byte) {
	vals := []int64{66, 8, 12}
	if !lolwutArgs(x, args, vals, []int64{1000, 200, 200}) {
		return
	}
	cols, perRow, perCol := int(vals[0]), int(vals[1]), int(vals[2])
	width, height, _, _ := schotterSize(cols, perRow, perCol)
	if cells := (width + 1) / 2 * ((height + 3) / 4); cells > lolwutMaxCells {
		x.err(fmt.Sprintf(msgLolwutTooBig, lolwutMaxCells))
		return
	}
	c := drawSchotter(cols, perRow, perCol, rand.Int32)
	x.w.Verbatim(renderBraille(c) + "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " + redisVersion + "\n")
}

// lolwut6 is LOLWUT VERSION 6 [columns] [rows].
func lolwut6(x *Ctx, args [][]byte) {
	vals := []int64{80, 20}
	if !lolwutArgs(x, args, vals, []int64{1000, 1000}) {
		return
	}
	c := newCanvas(int(vals[0]), int(vals[1]), 3)
	drawSkyline(c, rand.Int32)
	x.w.Verbatim(renderColors(c) + "\nDedicated to the 8 bit game developers of past and present.\n" +
		"Original 8 bit image from Plaguemon by hikikomori. Redis ver. " + redisVersion + "\n")
}

// skyscraper is lolwut6.c's: where, how big, the colour, windows or not.
type skyscraper struct {
	xoff, width, height int
	windows             bool
	color               byte
}

// draw is Redis's generateSkyscraper: windows two pixels wide, one tall, of a
// random grey other than the building's.
func (s skyscraper) draw(c *lwCanvas, rnd func() int32) {
	starty := c.height - 1
	endy := starty - s.height + 1
	for y := starty; y >= endy; y-- {
		for x := s.xoff; x < s.xoff+s.width; x++ {
			if y == endy && (x <= s.xoff+1 || x >= s.xoff+s.width-2) {
				continue // the roof is four pixels narrower
			}
			color := s.color
			if s.windows && x > s.xoff+1 && x < s.xoff+s.width-2 && y > endy+1 && y < starty-1 {
				relx, rely := x-(s.xoff+1), y-(endy+1)
				if relx/2%2 != 0 && rely%2 != 0 {
					for {
						color = byte(1 + rnd()%2)
						if color != s.color {
							break
						}
					}
					if relx%2 != 0 {
						color = c.get(x-1, y)
					}
				}
			}
			c.set(x, y, color)
		}
	}
}

// drawSkyline is Redis's generateSkyline: two rows of grey buildings behind,
// black ones with windows in front.
func drawSkyline(c *lwCanvas, rnd func() int32) {
	r := func(n int) int { return int(rnd()) % n }
	for color := byte(2); color >= 1; color-- {
		for offset := -10; offset < c.width; {
			offset += r(8)
			s := skyscraper{xoff: offset, width: 10 + r(9), color: color}
			if color == 2 {
				s.height = c.height/2 + r(c.height)/2
			} else {
				s.height = c.height/2 + r(c.height)/3
			}
			s.draw(c, rnd)
			if color == 2 {
				offset += s.width / 2
			} else {
				offset += s.width + 1
			}
		}
	}
	for offset := -10; offset < c.width; {
		offset += r(8)
		s := skyscraper{xoff: offset, width: 5 + r(14), windows: true}
		if s.width%4 != 0 {
			s.width += s.width % 3
		}
		s.height = c.height/3 + r(c.height)/2
		s.draw(c, rnd)
		offset += s.width + 5
	}
}

// lolwutColors are the escapes of the four colours, foreground and background.
var lolwutColors = [4]string{"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"}

// renderColors is lolwut6.c's renderCanvas: one coloured space per pixel.
func renderColors(c *lwCanvas) string {
	var b strings.Builder
	b.Grow(c.width * c.height * 20)
	for y := range c.height {
		for x := range c.width {
			ce := lolwutColors[0]
			if p := c.get(x, y); int(p) < len(lolwutColors) {
				ce = lolwutColors[p]
			}
			b.WriteString("\033[" + ce + " \033[0m")
		}
		if y != c.height-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

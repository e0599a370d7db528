package specs

import (
	"math/rand"
	"strings"
	"testing"
	"fmt"
)

func TestOpStats(t *testing.T) {
	ok, fail := map[string]int{}, map[string]int{}
	for seed := 1; seed <= 20; seed++ {
		r := rand.New(rand.NewSource(int64(seed)))
		s, _ := NewSpec(NewSpecInput{Name: "prop", Template: Templates()[seed%4].Name}, testClock(), nil)
		for step := 0; step < 150; step++ {
			name, err := randomOp(r, s)
			op := strings.Fields(name)[0]
			if err != nil {
				fail[op+" "+ErrorCodeOf(err)]++
			} else {
				ok[op]++
			}
		}
		fmt.Println(len(s.IDs()), s.Header.ProgressPercentage)
	}
	fmt.Println(ok)
	fmt.Println(fail)
}

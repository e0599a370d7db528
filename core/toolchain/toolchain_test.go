package toolchain

import "testing"

func TestAllFound(t *testing.T) {
	tests := []struct {
		name string
		ps   []Program
		want bool
	}{
		{"none needed", nil, true},
		{"all on PATH", []Program{{"git", true}, {"sh", true}}, true},
		{"one missing", []Program{{"git", true}, {"cargo", false}, {"sh", true}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AllFound(tt.ps); got != tt.want {
				t.Fatalf("AllFound = %v, want %v", got, tt.want)
			}
		})
	}
}

package themes

import (
	"image/color"
	"reflect"
	"testing"
)

func TestByName(t *testing.T) {
	for _, name := range Names() {
		p, err := ByName(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Name != name {
			t.Errorf("ByName(%q).Name = %q", name, p.Name)
		}
	}
	if _, err := ByName("solarized"); err == nil {
		t.Error("unknown theme accepted")
	}
	if p, _ := ByName("Dark"); p.Name != "dark" {
		t.Error("theme names are not case-insensitive")
	}
}

// TestEveryColourSet guards against a palette that forgets a field: a nil
// colour would silently render as the terminal default.
func TestEveryColourSet(t *testing.T) {
	colour := reflect.TypeOf((*color.Color)(nil)).Elem()
	for _, name := range Names() {
		p, _ := ByName(name)
		v := reflect.ValueOf(p)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Type == colour && v.Field(i).IsNil() {
				t.Errorf("%s: %s is not set", name, f.Name)
			}
		}
	}
}

func TestForBackground(t *testing.T) {
	if !ForBackground(true).Dark || ForBackground(false).Dark {
		t.Error("ForBackground picks the wrong palette")
	}
}

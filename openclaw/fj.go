package openclaw

import (
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
)

// Helpers that read fastjson values leniently: a field of an unexpected
// type reads as empty rather than failing the whole line.

func str(v *fastjson.Value, keys ...string) string {
	x := v.Get(keys...)
	if x == nil {
		return ""
	}
	switch x.Type() {
	case fastjson.TypeString:
		b, _ := x.StringBytes()
		return string(b)
	case fastjson.TypeNumber, fastjson.TypeTrue, fastjson.TypeFalse:
		return x.String()
	}
	return ""
}

func num(v *fastjson.Value, keys ...string) (int64, bool) {
	x := v.Get(keys...)
	if x == nil {
		return 0, false
	}
	switch x.Type() {
	case fastjson.TypeNumber:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		f, err := x.Float64()
		return int64(f), err == nil
	case fastjson.TypeString:
		b, _ := x.StringBytes()
		s := strings.TrimSpace(string(b))
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return int64(f), true
		}
	}
	return 0, false
}

func integer(v *fastjson.Value, keys ...string) int64 {
	n, _ := num(v, keys...)
	return n
}

func float(v *fastjson.Value, keys ...string) float64 {
	x := v.Get(keys...)
	if x == nil {
		return 0
	}
	switch x.Type() {
	case fastjson.TypeNumber:
		f, _ := x.Float64()
		return f
	case fastjson.TypeString:
		b, _ := x.StringBytes()
		f, _ := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		return f
	}
	return 0
}

func boolean(v *fastjson.Value, keys ...string) bool {
	x := v.Get(keys...)
	return x != nil && x.Type() == fastjson.TypeTrue
}

// timestampOf reads an ISO string or an epoch number as epoch ms.
func timestampOf(v *fastjson.Value, keys ...string) int64 {
	x := v.Get(keys...)
	if x == nil {
		return 0
	}
	switch x.Type() {
	case fastjson.TypeString:
		b, _ := x.StringBytes()
		return timestampText(string(b))
	case fastjson.TypeNumber:
		f, _ := x.Float64()
		return epochMillis(f)
	}
	return 0
}

func stringList(v *fastjson.Value, keys ...string) []string {
	var out []string
	for _, x := range v.GetArray(keys...) {
		if x.Type() == fastjson.TypeString {
			b, _ := x.StringBytes()
			out = append(out, string(b))
		}
	}
	return out
}

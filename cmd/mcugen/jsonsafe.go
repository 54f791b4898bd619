package main

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
)

// finiteJSON is v as encoding/json would give it, but with every NaN and
// infinity a string ("NaN", "Infinity", "-Infinity", as jsonFloat and
// protobuf's JSON mapping write them). printJSON falls back to it where
// encoding/json refuses a non-finite number: quantize --json with a NaN
// held-out SQNR printed only "json: unsupported value: NaN" (quantizer
// review). Structs follow their json tags (name, omitempty, "-"); a
// json.Marshaler is asked for its own text.
func finiteJSON(v reflect.Value) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	if m, ok := v.Interface().(json.Marshaler); ok && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		b, err := m.MarshalJSON()
		return json.RawMessage(b), err
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return "NaN", nil
		case math.IsInf(f, 1):
			return "Infinity", nil
		case math.IsInf(f, -1):
			return "-Infinity", nil
		}
		return f, nil
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return finiteJSON(v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		fallthrough
	case reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Interface(), nil // []byte: base64, as encoding/json
		}
		out := make([]any, v.Len())
		for i := range out {
			e, err := finiteJSON(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		if v.Type().Key().Kind() != reflect.String {
			return v.Interface(), nil
		}
		out := map[string]any{}
		for it := v.MapRange(); it.Next(); {
			e, err := finiteJSON(it.Value())
			if err != nil {
				return nil, err
			}
			out[it.Key().String()] = e
		}
		return out, nil
	case reflect.Struct:
		return finiteStruct(v)
	}
	return v.Interface(), nil
}

// orderedJSON is a JSON object whose keys keep the struct's field order.
type orderedJSON struct {
	keys []string
	vals []any
}

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := marshalJSON(k, "")
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalJSON(o.vals[i], "")
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

func finiteStruct(v reflect.Value) (any, error) {
	var o orderedJSON
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			inner, err := finiteStruct(fv)
			if err != nil {
				return nil, err
			}
			in := inner.(orderedJSON)
			o.keys, o.vals = append(o.keys, in.keys...), append(o.vals, in.vals...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") && fv.IsZero() && fv.Kind() != reflect.Struct {
			continue
		}
		e, err := finiteJSON(fv)
		if err != nil {
			return nil, err
		}
		o.keys, o.vals = append(o.keys, name), append(o.vals, e)
	}
	return o, nil
}

// unsupportedNumber reports encoding/json's refusal of a NaN or infinity.
func unsupportedNumber(err error) bool {
	var uv *json.UnsupportedValueError
	return errors.As(err, &uv)
}

package main

import (
	"github.com/mcugen/mcugen/graph"
	"github.com/mcugen/mcugen/importer"
)

// modelFlags are the options every command that reads a model takes.
type modelFlags struct {
	Model string   `arg:"" help:"Model file (.onnx or .tflite)." type:"path"`
	Shape []string `help:"Bind a dynamic input dimension, e.g. --shape input=1,49,10,1 (repeatable)." placeholder:"NAME=DIMS" sep:"none"`
}

func (m *modelFlags) load(e *env) (*graph.Graph, error) {
	shapes, err := parseShapes(m.Shape)
	if err != nil {
		return nil, err
	}
	return importer.Load(m.Model, importer.Options{Shapes: shapes, Warn: e.warn})
}

//! Turning a shipped ONNX model into a tract plan. Both face models are block-quantised: their
//! weights are int8 with one scale per block, restored by `DequantizeLinear` nodes that tract
//! refuses ("blocked quantization is not supported"). Those nodes only ever read constants, so they
//! are folded here, once, into f32 initialisers; the graph inputs the quantiser left dangling (the
//! original f32 weights, now read by nothing) are dropped, or tract would wait for them as inputs.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tract_onnx::pb::{tensor_proto::DataType, GraphProto, ModelProto, NodeProto, TensorProto};
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::prelude::InferenceModelExt;

/// A model ready to run, with the input shape it was built for.
pub type Plan = Arc<TypedSimplePlan>;

/// Why a model could not be made into a plan.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the face model is not a readable ONNX file: {0}")]
    Decode(String),
    #[error("the face model's {node} cannot be folded: {why}")]
    Dequantize { node: String, why: String },
    #[error("tract cannot build the face model: {0}")]
    Tract(String),
}

/// The plan of the ONNX model `bytes`, for one input of shape `input`.
pub fn plan(bytes: &[u8], input: &[usize]) -> Result<Plan, PlanError> {
    let onnx = tract_onnx::onnx();
    let mut proto = onnx
        .proto_model_for_read(&mut &bytes[..])
        .map_err(|e| PlanError::Decode(e.to_string()))?;
    fold_dequantize(&mut proto)?;
    let tract = |e: TractError| PlanError::Tract(format!("{e:#}"));
    onnx.model_for_proto_model(&proto)
        .map_err(tract)?
        .with_input_fact(0, f32::fact(input).into())
        .map_err(tract)?
        .into_optimized()
        .map_err(tract)?
        .into_runnable()
        .map_err(tract)
}

/// Replaces every `DequantizeLinear` whose operands are all initialisers by the f32 initialiser it
/// computes, then drops the graph inputs and initialisers nothing reads any more.
pub fn fold_dequantize(model: &mut ModelProto) -> Result<(), PlanError> {
    let Some(graph) = model.graph.as_mut() else {
        return Err(PlanError::Decode("the model has no graph".to_owned()));
    };
    let initialisers: HashMap<String, usize> = graph
        .initializer
        .iter()
        .enumerate()
        .map(|(at, tensor)| (tensor.name.clone(), at))
        .collect();
    let mut folded = Vec::new();
    let mut kept = Vec::with_capacity(graph.node.len());
    for node in std::mem::take(&mut graph.node) {
        let constant = node.op_type == "DequantizeLinear" && node.input.iter().all(|name| initialisers.contains_key(name));
        if constant {
            let operand = |at: usize| node.input.get(at).map(|name| &graph.initializer[initialisers[name]]);
            folded.push(dequantize(&node, operand(0), operand(1), operand(2))?);
        } else {
            kept.push(node);
        }
    }
    graph.node = kept;
    graph.initializer.extend(folded);
    drop_unread(graph);
    Ok(())
}

/// `y = (x - zero_point) * scale`, the scale and zero point taken per block of `block_size` along
/// `axis` (one of each for the whole tensor when there is a single one).
fn dequantize(
    node: &NodeProto,
    x: Option<&TensorProto>,
    scale: Option<&TensorProto>,
    zero: Option<&TensorProto>,
) -> Result<TensorProto, PlanError> {
    let fail = |why: &str| PlanError::Dequantize {
        node: node.name.clone(),
        why: why.to_owned(),
    };
    let (Some(x), Some(scale), Some(output)) = (x, scale, node.output.first()) else {
        return Err(fail("an operand is missing"));
    };
    let values = int8_values(x).ok_or_else(|| fail("the quantised weights are not int8"))?;
    let scales = f32_values(scale).ok_or_else(|| fail("the scales are not f32"))?;
    let zeros = match zero {
        Some(zero) => int8_values(zero).ok_or_else(|| fail("the zero points are not int8"))?,
        None => vec![0; scales.len()],
    };
    if zeros.len() != scales.len() || scales.is_empty() {
        return Err(fail("the scales and zero points do not pair up"));
    }
    let dims: Vec<usize> = x.dims.iter().map(|&d| usize::try_from(d).unwrap_or(0)).collect();
    if dims.iter().product::<usize>() != values.len() {
        return Err(fail("the weights do not fill their shape"));
    }
    let attribute = |name: &str| node.attribute.iter().find(|a| a.name == name).map(|a| a.i);
    let rank = dims.len() as i64;
    let axis = attribute("axis").unwrap_or(1);
    let axis = usize::try_from(if axis < 0 { axis + rank } else { axis }).map_err(|_| fail("the axis is out of range"))?;
    let block = usize::try_from(attribute("block_size").unwrap_or(0)).map_err(|_| fail("the block size is negative"))?;
    let pick = block_index(&dims, axis, block, scales.len()).map_err(|why| fail(&why))?;
    let folded: Vec<f32> = values
        .iter()
        .enumerate()
        .map(|(at, &v)| {
            let j = pick(at);
            (f32::from(v) - f32::from(zeros[j])) * scales[j]
        })
        .collect();
    Ok(TensorProto {
        name: output.clone(),
        dims: x.dims.clone(),
        data_type: DataType::Float as i32,
        raw_data: folded.iter().flat_map(|v| v.to_le_bytes()).collect(),
        ..TensorProto::default()
    })
}

/// Maps the flat index of a weight to the flat index of its scale: one scale for the whole tensor,
/// one per index along `axis` (no block size), or, blocked, the shape of the weights with `axis`
/// counted in blocks.
fn block_index(dims: &[usize], axis: usize, block: usize, scales: usize) -> Result<Box<dyn Fn(usize) -> usize>, String> {
    if scales == 1 {
        return Ok(Box::new(|_| 0));
    }
    let Some(&along) = dims.get(axis) else {
        return Err("the axis is out of range".to_owned());
    };
    let inner: usize = dims[axis + 1..].iter().product();
    if block == 0 {
        if scales != along {
            return Err(format!("{scales} scales for {along} indices along the axis"));
        }
        return Ok(Box::new(move |at: usize| (at / inner) % along));
    }
    let blocks = along.div_ceil(block);
    let outer: usize = dims[..axis].iter().product();
    if outer * blocks * inner != scales {
        return Err(format!("{scales} scales for weights of shape {dims:?} in blocks of {block}"));
    }
    Ok(Box::new(move |at: usize| {
        let i = at % inner;
        let a = (at / inner) % along;
        let o = at / (inner * along);
        (o * blocks + a / block) * inner + i
    }))
}

fn int8_values(tensor: &TensorProto) -> Option<Vec<i8>> {
    if tensor.data_type != DataType::Int8 as i32 {
        return None;
    }
    if !tensor.raw_data.is_empty() {
        return Some(tensor.raw_data.iter().map(|&b| b as i8).collect());
    }
    tensor.int32_data.iter().map(|&v| i8::try_from(v).ok()).collect()
}

fn f32_values(tensor: &TensorProto) -> Option<Vec<f32>> {
    if tensor.data_type != DataType::Float as i32 {
        return None;
    }
    if !tensor.raw_data.is_empty() {
        let chunks = tensor.raw_data.chunks_exact(4);
        if !chunks.remainder().is_empty() {
            return None;
        }
        return Some(chunks.map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect());
    }
    Some(tensor.float_data.clone())
}

/// Drops the inputs and initialisers no node and no output reads.
fn drop_unread(graph: &mut GraphProto) {
    let read: HashSet<String> = graph
        .node
        .iter()
        .flat_map(|node| node.input.iter().cloned())
        .chain(graph.output.iter().map(|output| output.name.clone()))
        .collect();
    graph.input.retain(|input| read.contains(&input.name));
    graph.initializer.retain(|tensor| read.contains(&tensor.name));
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::pb::AttributeProto;

    fn int8(name: &str, dims: &[i64], values: &[i8]) -> TensorProto {
        TensorProto {
            name: name.to_owned(),
            dims: dims.to_vec(),
            data_type: DataType::Int8 as i32,
            raw_data: values.iter().map(|&v| v as u8).collect(),
            ..TensorProto::default()
        }
    }

    fn f32s(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
        TensorProto {
            name: name.to_owned(),
            dims: dims.to_vec(),
            data_type: DataType::Float as i32,
            float_data: values.to_vec(),
            ..TensorProto::default()
        }
    }

    fn node(axis: i64, block: i64) -> NodeProto {
        let attribute = |name: &str, i| AttributeProto {
            name: name.to_owned(),
            i,
            ..AttributeProto::default()
        };
        NodeProto {
            name: "w_quantized_node".to_owned(),
            op_type: "DequantizeLinear".to_owned(),
            input: vec!["w_q".to_owned(), "w_s".to_owned(), "w_z".to_owned()],
            output: vec!["w".to_owned()],
            attribute: vec![attribute("axis", axis), attribute("block_size", block)],
            ..NodeProto::default()
        }
    }

    fn folded(tensor: &TensorProto) -> Vec<f32> {
        f32_values(tensor).unwrap()
    }

    #[test]
    fn blocks_along_the_last_axis_take_their_own_scale_and_zero() {
        // Two rows of five in blocks of two: three blocks a row, the last one short.
        let x = int8("w_q", &[2, 5], &[1, 2, 3, 4, 5, -1, -2, -3, -4, -5]);
        let s = f32s("w_s", &[2, 3], &[1.0, 0.5, 2.0, 10.0, 1.0, 0.25]);
        let z = int8("w_z", &[2, 3], &[0, 1, 0, 0, -2, 1]);
        let y = dequantize(&node(1, 2), Some(&x), Some(&s), Some(&z)).unwrap();
        assert_eq!(y.name, "w");
        assert_eq!(y.dims, vec![2, 5]);
        assert_eq!(folded(&y), vec![1.0, 2.0, 1.0, 1.5, 10.0, -10.0, -20.0, -1.0, -2.0, -1.5]);
    }

    #[test]
    fn one_scale_serves_the_whole_tensor_whatever_the_block_size() {
        let x = int8("w_q", &[4], &[-128, 0, 1, 127]);
        let s = f32s("w_s", &[1], &[0.5]);
        let z = int8("w_z", &[1], &[1]);
        let y = dequantize(&node(0, 64), Some(&x), Some(&s), Some(&z)).unwrap();
        assert_eq!(folded(&y), vec![-64.5, -0.5, 0.0, 63.0]);
    }

    #[test]
    fn without_a_block_size_each_index_along_the_axis_has_its_scale() {
        let x = int8("w_q", &[2, 2], &[2, 4, 6, 8]);
        let s = f32s("w_s", &[2], &[0.5, 2.0]);
        let z = int8("w_z", &[2], &[0, 1]);
        let y = dequantize(&node(0, 0), Some(&x), Some(&s), Some(&z)).unwrap();
        assert_eq!(folded(&y), vec![1.0, 2.0, 10.0, 14.0]);
    }

    #[test]
    fn scales_that_do_not_fit_the_blocks_are_refused_by_node() {
        let x = int8("w_q", &[2, 4], &[0; 8]);
        let s = f32s("w_s", &[2, 3], &[1.0; 6]);
        let z = int8("w_z", &[2, 3], &[0; 6]);
        let refused = dequantize(&node(1, 2), Some(&x), Some(&s), Some(&z)).unwrap_err();
        assert!(refused.to_string().contains("w_quantized_node"), "{refused}");
        let floats = f32s("w_q", &[2, 4], &[0.0; 8]);
        assert!(dequantize(&node(1, 2), Some(&floats), Some(&s), Some(&z)).is_err());
    }

    #[test]
    fn the_folded_graph_keeps_no_dangling_input() {
        let mut graph = GraphProto {
            node: vec![node(1, 2)],
            initializer: vec![
                int8("w_q", &[1, 2], &[2, 4]),
                f32s("w_s", &[1, 1], &[0.5]),
                int8("w_z", &[1, 1], &[0]),
            ],
            input: vec![tract_onnx::pb::ValueInfoProto {
                name: "w_original".to_owned(),
                ..Default::default()
            }],
            output: vec![tract_onnx::pb::ValueInfoProto {
                name: "w".to_owned(),
                ..Default::default()
            }],
            ..GraphProto::default()
        };
        let mut model = ModelProto {
            graph: Some(graph.clone()),
            ..ModelProto::default()
        };
        fold_dequantize(&mut model).unwrap();
        graph = model.graph.unwrap();
        assert!(graph.node.is_empty() && graph.input.is_empty());
        let names: Vec<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, vec!["w"]);
        assert_eq!(folded(&graph.initializer[0]), vec![1.0, 2.0]);
    }
}

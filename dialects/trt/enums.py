"""TensorRT's enumerations as xDSL attributes.

Each enum keeps nvinfer1's spelling (``kRELU``, ``kSUM``, ...) so that the IR
reads like the TensorRT API it is emitted through.  Inside an op's assembly
format an enum prints bare (``trt.activation kRELU %x``); inside an attribute
dictionary it prints qualified (``#trt<padding_mode kSAME_UPPER>``).
"""

from __future__ import annotations

from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.str_enum import StrEnum


class ActivationType(StrEnum):
    """nvinfer1::ActivationType; alpha/beta meanings are in the reference executor."""

    kRELU = "kRELU"
    kSIGMOID = "kSIGMOID"
    kTANH = "kTANH"
    kLEAKY_RELU = "kLEAKY_RELU"
    kELU = "kELU"
    kSELU = "kSELU"
    kSOFTSIGN = "kSOFTSIGN"
    kSOFTPLUS = "kSOFTPLUS"
    kCLIP = "kCLIP"
    kHARD_SIGMOID = "kHARD_SIGMOID"
    kSCALED_TANH = "kSCALED_TANH"
    kTHRESHOLDED_RELU = "kTHRESHOLDED_RELU"
    kGELU_ERF = "kGELU_ERF"
    kGELU_TANH = "kGELU_TANH"


class ElementWiseOperation(StrEnum):
    kSUM = "kSUM"
    kPROD = "kPROD"
    kMAX = "kMAX"
    kMIN = "kMIN"
    kSUB = "kSUB"
    kDIV = "kDIV"
    kPOW = "kPOW"
    kFLOOR_DIV = "kFLOOR_DIV"
    kAND = "kAND"
    kOR = "kOR"
    kXOR = "kXOR"
    kEQUAL = "kEQUAL"
    kGREATER = "kGREATER"
    kLESS = "kLESS"


class UnaryOperation(StrEnum):
    kEXP = "kEXP"
    kLOG = "kLOG"
    kSQRT = "kSQRT"
    kRECIP = "kRECIP"
    kABS = "kABS"
    kNEG = "kNEG"
    kSIN = "kSIN"
    kCOS = "kCOS"
    kTAN = "kTAN"
    kSINH = "kSINH"
    kCOSH = "kCOSH"
    kASIN = "kASIN"
    kACOS = "kACOS"
    kATAN = "kATAN"
    kASINH = "kASINH"
    kACOSH = "kACOSH"
    kATANH = "kATANH"
    kCEIL = "kCEIL"
    kFLOOR = "kFLOOR"
    kERF = "kERF"
    kNOT = "kNOT"
    kSIGN = "kSIGN"
    kROUND = "kROUND"
    kISINF = "kISINF"
    kISNAN = "kISNAN"


class MatrixOperation(StrEnum):
    kNONE = "kNONE"
    kTRANSPOSE = "kTRANSPOSE"
    kVECTOR = "kVECTOR"


class PoolingType(StrEnum):
    kMAX = "kMAX"
    kAVERAGE = "kAVERAGE"
    kMAX_AVERAGE_BLEND = "kMAX_AVERAGE_BLEND"


class PaddingMode(StrEnum):
    """How convolution/pooling padding and output size are computed."""

    kEXPLICIT_ROUND_DOWN = "kEXPLICIT_ROUND_DOWN"
    kEXPLICIT_ROUND_UP = "kEXPLICIT_ROUND_UP"
    kSAME_UPPER = "kSAME_UPPER"
    kSAME_LOWER = "kSAME_LOWER"


class ReduceOperation(StrEnum):
    kSUM = "kSUM"
    kPROD = "kPROD"
    kMAX = "kMAX"
    kMIN = "kMIN"
    kAVG = "kAVG"


class SampleMode(StrEnum):
    """How ISliceLayer treats out-of-bounds coordinates (nvinfer1::SampleMode)."""

    kSTRICT_BOUNDS = "kSTRICT_BOUNDS"
    kWRAP = "kWRAP"
    kCLAMP = "kCLAMP"
    kFILL = "kFILL"
    kREFLECT = "kREFLECT"


class GatherMode(StrEnum):
    kDEFAULT = "kDEFAULT"
    kELEMENT = "kELEMENT"
    kND = "kND"


class ScatterMode(StrEnum):
    kELEMENT = "kELEMENT"
    kND = "kND"


class ScaleMode(StrEnum):
    kUNIFORM = "kUNIFORM"
    kCHANNEL = "kCHANNEL"
    kELEMENTWISE = "kELEMENTWISE"


class InterpolationMode(StrEnum):
    """IResizeLayer's resize mode."""

    kNEAREST = "kNEAREST"
    kLINEAR = "kLINEAR"


class ResizeCoordinateTransformation(StrEnum):
    kALIGN_CORNERS = "kALIGN_CORNERS"
    kASYMMETRIC = "kASYMMETRIC"
    kHALF_PIXEL = "kHALF_PIXEL"


class ResizeSelector(StrEnum):
    kFORMULA = "kFORMULA"
    kUPPER = "kUPPER"


class ResizeRoundMode(StrEnum):
    kHALF_UP = "kHALF_UP"
    kHALF_DOWN = "kHALF_DOWN"
    kFLOOR = "kFLOOR"
    kCEIL = "kCEIL"


class TopKOperation(StrEnum):
    kMAX = "kMAX"
    kMIN = "kMIN"


class FillOperation(StrEnum):
    kLINSPACE = "kLINSPACE"
    kRANDOM_UNIFORM = "kRANDOM_UNIFORM"
    kRANDOM_NORMAL = "kRANDOM_NORMAL"


class CumulativeOperation(StrEnum):
    kSUM = "kSUM"


@irdl_attr_definition
class ActivationTypeAttr(EnumAttribute[ActivationType], SpacedOpaqueSyntaxAttribute):
    name = "trt.activation_type"


@irdl_attr_definition
class ElementWiseOperationAttr(EnumAttribute[ElementWiseOperation], SpacedOpaqueSyntaxAttribute):
    name = "trt.elementwise_op"


@irdl_attr_definition
class UnaryOperationAttr(EnumAttribute[UnaryOperation], SpacedOpaqueSyntaxAttribute):
    name = "trt.unary_op"


@irdl_attr_definition
class MatrixOperationAttr(EnumAttribute[MatrixOperation], SpacedOpaqueSyntaxAttribute):
    name = "trt.matrix_op"


@irdl_attr_definition
class PoolingTypeAttr(EnumAttribute[PoolingType], SpacedOpaqueSyntaxAttribute):
    name = "trt.pooling_type"


@irdl_attr_definition
class PaddingModeAttr(EnumAttribute[PaddingMode], SpacedOpaqueSyntaxAttribute):
    name = "trt.padding_mode"


@irdl_attr_definition
class ReduceOperationAttr(EnumAttribute[ReduceOperation], SpacedOpaqueSyntaxAttribute):
    name = "trt.reduce_op"


@irdl_attr_definition
class SampleModeAttr(EnumAttribute[SampleMode], SpacedOpaqueSyntaxAttribute):
    name = "trt.sample_mode"


@irdl_attr_definition
class GatherModeAttr(EnumAttribute[GatherMode], SpacedOpaqueSyntaxAttribute):
    name = "trt.gather_mode"


@irdl_attr_definition
class ScatterModeAttr(EnumAttribute[ScatterMode], SpacedOpaqueSyntaxAttribute):
    name = "trt.scatter_mode"


@irdl_attr_definition
class ScaleModeAttr(EnumAttribute[ScaleMode], SpacedOpaqueSyntaxAttribute):
    name = "trt.scale_mode"


@irdl_attr_definition
class InterpolationModeAttr(EnumAttribute[InterpolationMode], SpacedOpaqueSyntaxAttribute):
    name = "trt.interpolation_mode"


@irdl_attr_definition
class ResizeCoordinateTransformationAttr(
    EnumAttribute[ResizeCoordinateTransformation], SpacedOpaqueSyntaxAttribute
):
    name = "trt.coordinate_transformation"


@irdl_attr_definition
class ResizeSelectorAttr(EnumAttribute[ResizeSelector], SpacedOpaqueSyntaxAttribute):
    name = "trt.resize_selector"


@irdl_attr_definition
class ResizeRoundModeAttr(EnumAttribute[ResizeRoundMode], SpacedOpaqueSyntaxAttribute):
    name = "trt.round_mode"


@irdl_attr_definition
class TopKOperationAttr(EnumAttribute[TopKOperation], SpacedOpaqueSyntaxAttribute):
    name = "trt.topk_op"


@irdl_attr_definition
class FillOperationAttr(EnumAttribute[FillOperation], SpacedOpaqueSyntaxAttribute):
    name = "trt.fill_op"


@irdl_attr_definition
class CumulativeOperationAttr(EnumAttribute[CumulativeOperation], SpacedOpaqueSyntaxAttribute):
    name = "trt.cumulative_op"


ENUM_ATTRIBUTES = (
    ActivationTypeAttr,
    ElementWiseOperationAttr,
    UnaryOperationAttr,
    MatrixOperationAttr,
    PoolingTypeAttr,
    PaddingModeAttr,
    ReduceOperationAttr,
    SampleModeAttr,
    GatherModeAttr,
    ScatterModeAttr,
    ScaleModeAttr,
    InterpolationModeAttr,
    ResizeCoordinateTransformationAttr,
    ResizeSelectorAttr,
    ResizeRoundModeAttr,
    TopKOperationAttr,
    FillOperationAttr,
    CumulativeOperationAttr,
)

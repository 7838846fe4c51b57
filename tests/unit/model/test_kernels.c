/*
 * test_kernels.c: the class and precision of GPU records by name (kernels.h), on the names
 * an H100 with PyTorch 2.11, cuBLAS, cuDNN 9 and CUTLASS gave (tests/gpu), mangled as
 * CUPTI gives them and readable as torch.profiler prints them, and their short names.
 */
#include <string.h>

#include "check.h"
#include "kernels.h"

static void expect(const char *name, enum po_kernel_class cls, enum po_precision precision)
{
	struct po_kernel_kind kind = po_kernel_classify(PO_GPU_KERNEL, name, strlen(name));

	if (kind.cls != cls || kind.precision != precision)
		fprintf(stderr, "%s: %s/%s, expected %s/%s\n", name, po_kernel_class_name(kind.cls),
			po_precision_name(kind.precision), po_kernel_class_name(cls),
			po_precision_name(precision));
	CHECK(kind.cls == cls && kind.precision == precision);
}

static void test_matrix_kernels(void)
{
	/* fp32 on CUDA cores (no tensor cores): what mixed precision or TF32 speeds up */
	expect("_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_128x256_8x4_nt_align1EEvNT_6ParamsE",
	       PO_KERNEL_MATMUL, PO_PRECISION_FP32);
	expect("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_"
	       "aligna4_alignc4_execute_kernel__5x_cublas",
	       PO_KERNEL_MATMUL, PO_PRECISION_FP32);
	expect("_Z39fmha_cutlassF_f32_aligned_64x64_rf_sm80N22PyTorchMemEffAttention15AttentionKe",
	       PO_KERNEL_ATTENTION, PO_PRECISION_FP32);
	expect(
	    "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize256x64x8_stage3"
	    "_warpsize2x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn",
	    PO_KERNEL_CONVOLUTION, PO_PRECISION_FP32);
	/* cuDNN's convolutions in TF32 (PyTorch's default for convolutions) */
	expect(
	    "sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x1"
	    "28x32_warpgroupsize1x1x1_g1_execute_segment_k_on_kernel__5x_cudnn",
	    PO_KERNEL_CONVOLUTION, PO_PRECISION_TF32);
	/* under autocast(bfloat16) */
	expect(
	    "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_"
	    "warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
	    PO_KERNEL_CONVOLUTION, PO_PRECISION_BF16);
	expect(
	    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_tn_"
	    "align2>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x1_tn_align2::Params)",
	    PO_KERNEL_MATMUL, PO_PRECISION_BF16);
	expect("void precomputed_convolve_sgemm<__nv_bfloat16, 128, 6, 7, 3, 3, 5, 1, false>(int)",
	       PO_KERNEL_CONVOLUTION, PO_PRECISION_BF16);
	expect("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", PO_KERNEL_MATMUL,
	       PO_PRECISION_HALF);
	expect("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_"
	       "cga1x1x1_kernel0_0",
	       PO_KERNEL_ATTENTION, PO_PRECISION_HALF);
	expect("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_nn", PO_KERNEL_MATMUL,
	       PO_PRECISION_FP16);
	expect("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128", PO_KERNEL_MATMUL,
	       PO_PRECISION_FP8);
	/* cuBLASLt's split-K reduction is part of the matrix product; no precision in its name */
	expect("_ZN8cublasLt19splitKreduce_kernelILi32ELi16EiffffLb0EfffLb1ELb0ELb0ELb0EEEvNS_"
	       "18cublasSplitKParamsIT4_EEPKT2_",
	       PO_KERNEL_MATMUL, PO_PRECISION_UNKNOWN);
}

static void test_other_kernels(void)
{
	/* cuDNN converts NCHW tensors to NHWC around each convolution: what channels_last saves */
	expect("_ZN5cudnn19engines_precompiled16nchwToNhwcKernelIfffLb0ELb1EL21cudnnKernelDataType_"
	       "t0EEEvNS0_18nchw2nhwc_params_tIT1_EEPKT_PT0_",
	       PO_KERNEL_LAYOUT, PO_PRECISION_UNKNOWN);
	expect(
	    "void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false, "
	    "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>)",
	    PO_KERNEL_LAYOUT, PO_PRECISION_UNKNOWN);
	expect(
	    "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_"
	    "args<float>)",
	    PO_KERNEL_NORMALIZATION, PO_PRECISION_UNKNOWN);
	expect(
	    "_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a35GammaBetaBackwa",
	    PO_KERNEL_NORMALIZATION, PO_PRECISION_UNKNOWN);
	expect(
	    "_ZN2at6native13reduce_kernelILi128ELi4ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11s",
	    PO_KERNEL_REDUCTION, PO_PRECISION_UNKNOWN);
	expect(
	    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 7, true, false>"
	    "(float*, float const*, int, int, int, bool const*, int, bool)",
	    PO_KERNEL_REDUCTION, PO_PRECISION_UNKNOWN);
	expect(
	    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPc"
	    "Lm3EEEEviT0_T1_",
	    PO_KERNEL_ELEMENTWISE, PO_PRECISION_UNKNOWN);
	expect(
	    "_ZN2at6native55_GLOBAL__N__d25d856e_22_ForeachBinaryOpList_cu_a911ec4325multi_tensor_"
	    "apply_kernelINS1_18TensorListMetadataILi2EEE",
	    PO_KERNEL_ELEMENTWISE, PO_PRECISION_UNKNOWN);
	expect("triton_poi_fused_add_relu_0", PO_KERNEL_ELEMENTWISE, PO_PRECISION_UNKNOWN);
	expect("triton_red_fused_sum_1", PO_KERNEL_REDUCTION, PO_PRECISION_UNKNOWN);
	/* "convert" is no convolution */
	expect("void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*)",
	       PO_KERNEL_OTHER, PO_PRECISION_UNKNOWN);
	expect("spin(long long)", PO_KERNEL_OTHER, PO_PRECISION_UNKNOWN);
	expect("", PO_KERNEL_OTHER, PO_PRECISION_UNKNOWN);
	CHECK(po_kernel_classify(PO_GPU_MEMCPY_H2D, "memcpy HtoD (pinned)", 20).cls ==
	      PO_KERNEL_COPY);
	CHECK(po_kernel_classify(PO_GPU_MEMSET, "memset", 6).cls == PO_KERNEL_MEMSET);
}

static void expect_short(const char *name, const char *expected)
{
	char out[128];

	po_kernel_short_name(name, out, sizeof(out));
	if (strcmp(out, expected) != 0)
		fprintf(stderr, "short name of %s: %s, expected %s\n", name, out, expected);
	CHECK_STR_EQ(out, expected);
}

static void test_short_names(void)
{
	expect_short("_ZN2at6native13reduce_kernelILi128ELi4ENS0_8ReduceOpIfEEEEvT1_",
		     "at::native::reduce_kernel");
	expect_short(
	    "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_128x256_8x4_nt_align1EEvNT_6Params"
	    "E",
	    "cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>");
	expect_short("_Z39fmha_cutlassF_f32_aligned_64x64_rf_sm80N22PyTorchMemEffAttention",
		     "fmha_cutlassF_f32_aligned_64x64_rf_sm80");
	expect_short(
	    "_ZN2at6native55_GLOBAL__N__d25d856e_22_ForeachBinaryOpList_cu_a911ec4325multi_"
	    "tensor_apply_kernelINS1_18TensorListMetadataILi2EEEEvT_",
	    "at::native::multi_tensor_apply_kernel");
	expect_short("void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)",
		     "at::native::reduce_kernel<512, 1>");
	expect_short("sm90_xmma_gemm_f32f32", "sm90_xmma_gemm_f32f32");
	/* damaged mangling: the name as it is */
	expect_short("_ZN99short", "_ZN99short");
	expect_short("", "");
}

int main(void)
{
	RUN(test_matrix_kernels);
	RUN(test_other_kernels);
	RUN(test_short_names);
	return CHECK_SUMMARY();
}

/*
 * kernels.c: the simulated kernels' names (--kernel-mix), as cuBLAS, cuDNN, CUTLASS and
 * PyTorch name theirs on an H100 (what profopt's kernel classes read: docs/gpu.md).
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct mix_name {
	const char *key;
	const char *name;
};

static const struct mix_name names[] = {
    {"matmul-fp32", "ampere_sgemm_128x64_nn"},
    {"matmul-tf32", "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_"
		    "execute_segment_k_off_kernel__5x_cublas"},
    {"matmul-bf16", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
		    "_execute_segment_k_off_kernel__5x_cublas"},
    {"matmul-fp16", "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
		    "execute_segment_k_off_kernel__5x_cublas"},
    {"conv-fp32", "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize256x64x8_"
		  "stage3_warpsize2x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn"},
    {"conv-tf32", "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x"
		  "32_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn"},
    {"conv-bf16", "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x12"
		  "8x64_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn"},
    {"conv-fp16", "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x6"
		  "4_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn"},
    {"attention-fp32", "fmha_cutlassF_f32_aligned_64x64_rf_sm80"},
    {"attention-bf16", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x"
		       "64_4x1x1_cga1x1x1_kernel0_0"},
    {"layout",
     "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
     "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, "
     "float const*, float*)"},
    {"normalization", "void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_"
		      "fw_tr_1C11_args<float>)"},
    {"elementwise", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
		    "<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, "
		    "std::array<char*, 3ul>)"},
    {"reduction", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::"
		  "MeanOps<float, float, float, float>, unsigned int, float, 4, 4> >(at::native::"
		  "ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, "
		  "float, 4, 4>)"},
};

static const char *name_of(const char *key, size_t length)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].key) == length && strncmp(names[i].key, key, length) == 0)
			return names[i].name;
	return NULL;
}

/* One CLASS[-PRECISION]:PCT entry of [text, end). */
static enum po_status parse_entry(struct sim_kernel_mix *mix, const char *text, const char *end,
				  struct po_error *err)
{
	const char *colon = memchr(text, ':', (size_t)(end - text));
	char *after;
	long percent;

	if (!colon || mix->count == SIM_MIX_MAX ||
	    !(mix->names[mix->count] = name_of(text, (size_t)(colon - text)))) {
		po_error_set(err,
			     "--kernel-mix: %.*s is not CLASS[-PRECISION]:PCT (classes: matmul, "
			     "conv, attention with -fp32, -tf32, -bf16 or -fp16; layout, "
			     "normalization, elementwise, reduction; at most %d)",
			     (int)(end - text), text, SIM_MIX_MAX);
		return PO_STATUS_USAGE;
	}
	percent = strtol(colon + 1, &after, 10);
	if (after != end || percent <= 0 || percent > 100) {
		po_error_set(err, "--kernel-mix: %.*s: the share must be a percent from 1 to 100",
			     (int)(end - text), text);
		return PO_STATUS_USAGE;
	}
	mix->percent[mix->count++] = percent;
	return PO_STATUS_OK;
}

enum po_status sim_kernel_mix_parse(struct sim_kernel_mix *mix, const char *text,
				    struct po_error *err)
{
	int64_t total = 0;

	*mix = (struct sim_kernel_mix){0};
	while (text && *text) {
		const char *end = strchr(text, ',');

		if (!end)
			end = text + strlen(text);
		if (parse_entry(mix, text, end, err) != PO_STATUS_OK)
			return PO_STATUS_USAGE;
		total += mix->percent[mix->count - 1];
		text = *end ? end + 1 : end;
	}
	if (mix->count && total != 100) {
		po_error_set(err, "--kernel-mix: the shares add up to %lld%%, not 100%%",
			     (long long)total);
		return PO_STATUS_USAGE;
	}
	return PO_STATUS_OK;
}

void sim_kernel_mix_pick(const struct sim_kernel_mix *mix, int64_t index, int64_t kernel_count,
			 int64_t gpu_ns, const char **name, int64_t *duration_ns)
{
	int64_t first = 0;

	for (size_t i = 0; i < mix->count; i++) {
		/* this entry's kernels: its share of them, at least one */
		int64_t count = kernel_count * mix->percent[i] / 100;

		if (count < 1)
			count = 1;
		if (index < first + count || i + 1 == mix->count) {
			if (i + 1 == mix->count)
				count = kernel_count - first > 0 ? kernel_count - first : 1;
			*name = mix->names[i];
			*duration_ns = gpu_ns * mix->percent[i] / 100 / count;
			return;
		}
		first += count;
	}
	*name = "kernel";
	*duration_ns = kernel_count ? gpu_ns / kernel_count : 0;
}

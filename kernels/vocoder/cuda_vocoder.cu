// The host side of the CUDA vocoder: slots, call validation, one program (and
// graph) per batch bucket, the copies in and out of a call, and stage read-back.
#include "kernels/vocoder/cuda_vocoder.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/launch_timer.h"
#include "kernels/vocoder/device_memory.h"
#include "kernels/vocoder/device_weights.h"
#include "kernels/vocoder/vocoder_buffers.h"
#include "kernels/vocoder/vocoder_ops.h"
#include "kernels/vocoder/vocoder_program.h"

namespace megatts {

namespace {

static_assert(cuda_vocoder_limits::max_items == voc::k_max_batch, "the public limit is the kernels'");
static_assert(cuda_vocoder_limits::max_frame_stack_items == voc::k_stack_max_items,
              "the public limit is the stack kernel's");

// Row times are 32-bit on the device: frame * samples_per_frame must stay below 2^31.
constexpr int k_max_frames = 1'000'000;

struct bucket_run {
    voc::vocoder_program program;
    cudaGraphExec_t graph = nullptr;
};

}  // namespace

struct cuda_vocoder::impl {
    cuda_vocoder_limits limits;
    voc::device_weights weights;
    voc::device_memory memory;  // state and scratch
    voc::vocoder_buffers buffers;
    std::vector<bucket_run> buckets;
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;  // recorded after each launch's work (queue_wait)
    launch_timer* timer = nullptr;
    voc::batch_desc* host_batch = nullptr;  // pinned
    float* host_audio = nullptr;            // pinned, [max_batch][samples]
    std::vector<bool> admitted;
    std::vector<int> frames;
    std::vector<voc::item_desc> last_items;  // of the last successful call
    int pending = 0;  // items of a launch() not yet collect()ed
    bool broken = false;

    ~impl() {
        for (auto& b : buckets)
            if (b.graph) cudaGraphExecDestroy(b.graph);
        if (host_batch) cudaFreeHost(host_batch);
        if (host_audio) cudaFreeHost(host_audio);
        if (done) cudaEventDestroy(done);
        if (stream) cudaStreamDestroy(stream);
    }

    int samples() const { return buffers.rows.samples; }

    const bucket_run& bucket_for(int items) const {
        for (const auto& b : buckets)
            if (b.program.bucket >= items) return b;
        return buckets.back();
    }

    // One call on the stream: the batch description in, the ops, the audio out.
    result<void> enqueue(const voc::vocoder_program& p) {
        CUDA_TRY(cudaMemcpyAsync(buffers.batch, host_batch, sizeof(voc::batch_desc), cudaMemcpyHostToDevice, stream));
        bool after_kernel = false;
        for (const auto& op : p.ops) {
            CUDA_TRY(voc::launch_op(op, stream, limits.programmatic_launch && after_kernel));
            after_kernel = true;
        }
        CUDA_TRY(cudaMemcpyAsync(host_audio, buffers.audio.data,
                                 static_cast<std::size_t>(p.bucket) * samples() * sizeof(float),
                                 cudaMemcpyDeviceToHost, stream));
        return {};
    }

    result<void> capture(bucket_run& b) {
        CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        const result<void> enqueued = enqueue(b.program);
        cudaGraph_t graph = nullptr;
        const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
        MEGATTS_TRY(enqueued);
        CUDA_TRY(ended);
        const cudaError_t made = cudaGraphInstantiate(&b.graph, graph, 0);
        cudaGraphDestroy(graph);
        CUDA_TRY(made);
        return {};
    }

    result<void> setup(const ref::vocoder_weights& w) {
        int device = 0, sms = 0;
        CUDA_TRY(cudaGetDevice(&device));
        CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        int stack_smem = 0, implicit_smem = 0;
        CUDA_TRY(voc::prepare_vocoder_kernels(stack_smem, implicit_smem));
        // The TF32 products are wgmma's (sm_90a): elsewhere their 64 MB of weights would go unread.
        int major = 0;
        CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        auto uploaded = voc::upload_weights(w, limits.tf32_convs && major == 9);
        if (!uploaded) return uploaded.err();
        weights = std::move(uploaded.value());
        auto allocated = voc::allocate_buffers(weights, limits.slots, limits.max_batch, memory);
        if (!allocated) return allocated.err();
        buffers = allocated.value();

        std::size_t workspace = 0, counters = 0;
        for (int bucket = 1;; bucket *= 2) {
            const int items = std::min(bucket, limits.max_batch);
            const int stack = items <= limits.frame_stack_items ? stack_smem : 0;
            auto p = voc::build_program(weights, buffers, items,
                                        {.sms = sms,
                                         .stack_smem = stack,
                                         .implicit_smem = implicit_smem,
                                         .cluster_sum = limits.cluster_sum});
            if (!p) return p.err();
            workspace = std::max(workspace, p->workspace_floats);
            counters = std::max(counters, p->counters);
            buckets.push_back({std::move(p.value()), nullptr});
            if (bucket >= limits.max_batch) break;
        }
        auto ws = memory.zeros(std::max<std::size_t>(workspace, 1));
        if (!ws) return ws.err();
        auto ctr = memory.raw(std::max<std::size_t>(counters, 1) * sizeof(unsigned int));
        if (!ctr) return ctr.err();
        CUDA_TRY(cudaMemset(*ctr, 0, std::max<std::size_t>(counters, 1) * sizeof(unsigned int)));
        for (auto& b : buckets) voc::bind_scratch(b.program, *ws, static_cast<unsigned int*>(*ctr));

        CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CUDA_TRY(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&host_batch), sizeof(voc::batch_desc), cudaHostAllocDefault));
        CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&host_audio),
                               static_cast<std::size_t>(limits.max_batch) * samples() * sizeof(float),
                               cudaHostAllocDefault));
        std::memset(host_batch, 0, sizeof(voc::batch_desc));
        if (limits.graphs)
            for (auto& b : buckets) MEGATTS_TRY(capture(b));
        // The uploads and zeroing went through the legacy stream, which the call
        // stream (non-blocking) does not wait for: let them finish here.
        CUDA_TRY(cudaDeviceSynchronize());
        admitted.assign(static_cast<std::size_t>(limits.slots), false);
        frames.assign(static_cast<std::size_t>(limits.slots), 0);
        return {};
    }

    static result<void> check_room(std::size_t items, std::span<float> pcm, int samples) {
        const auto needed = items * static_cast<std::size_t>(samples);
        if (pcm.size() >= needed) return {};
        return make_error(error_kind::invalid_input, "cuda vocoder: room for " + std::to_string(pcm.size()) +
                                                         " samples, " + std::to_string(needed) + " needed");
    }

    result<void> check(std::span<const vocoder_frame> items) const {
        const auto& d = weights.dims;
        auto bad = [](const std::string& what) { return make_error(error_kind::invalid_input, "cuda vocoder: " + what); };
        if (items.empty() || static_cast<int>(items.size()) > limits.max_batch)
            return bad(std::to_string(items.size()) + " items in one call (1.." + std::to_string(limits.max_batch) + ")");
        std::vector<bool> seen(admitted.size(), false);
        for (const auto& it : items) {
            const std::string slot = "slot " + std::to_string(it.slot);
            if (it.slot < 0 || it.slot >= limits.slots) return bad(slot + " does not exist");
            const auto s = static_cast<std::size_t>(it.slot);
            if (!admitted[s]) return bad(slot + " is not admitted");
            if (seen[s]) return bad(slot + " appears twice in one call");
            seen[s] = true;
            if (frames[s] >= k_max_frames) return bad(slot + " reached " + std::to_string(k_max_frames) + " frames");
            if (it.codes.size() != static_cast<std::size_t>(d.num_quantizers))
                return bad(slot + ": " + std::to_string(it.codes.size()) + " codes, " +
                           std::to_string(d.num_quantizers) + " expected");
            for (std::size_t q = 0; q < it.codes.size(); ++q)
                if (it.codes[q] < 0 || it.codes[q] >= d.codebook_size)
                    return bad(slot + ": code " + std::to_string(it.codes[q]) + " of codebook " + std::to_string(q) +
                               " is outside [0, " + std::to_string(d.codebook_size) + ")");
        }
        return {};
    }

    // Queues the call; the slots' frame counts advance at once (admit() may restart a slot
    // while its frame is computed: the GPU reads the frame the launch wrote down).
    result<void> launch(std::span<const vocoder_frame> items) {
        host_batch->n_items = static_cast<int>(items.size());
        for (std::size_t i = 0; i < items.size(); ++i) {
            auto& d = host_batch->items[i];
            d.slot = items[i].slot;
            d.frame = frames[static_cast<std::size_t>(items[i].slot)];
            std::copy(items[i].codes.begin(), items[i].codes.end(), d.codes);
        }
        const bucket_run& b = bucket_for(static_cast<int>(items.size()));
        if (timer) MEGATTS_TRY(timer->begin(stream));
        if (b.graph)
            CUDA_TRY(cudaGraphLaunch(b.graph, stream));
        else
            MEGATTS_TRY(enqueue(b.program));
        if (timer) MEGATTS_TRY(timer->end(stream));
        CUDA_TRY(cudaEventRecord(done, stream));
        last_items.assign(host_batch->items, host_batch->items + items.size());
        for (const auto& it : items) ++frames[static_cast<std::size_t>(it.slot)];
        pending = static_cast<int>(items.size());
        return {};
    }

    result<void> collect(std::span<float> pcm) {
        CUDA_TRY(cudaEventSynchronize(done));
        std::copy_n(host_audio, static_cast<std::size_t>(pending) * samples(), pcm.begin());
        pending = 0;
        return {};
    }

    // Rows [first, first + count) of item `item`'s slot in a ring, or of its flat rows.
    result<std::vector<float>> read_rows(const voc::act_view& v, int item, int rows_per_frame) const {
        const auto& it = last_items[static_cast<std::size_t>(item)];
        const auto width = static_cast<std::size_t>(v.width);
        std::vector<float> out(static_cast<std::size_t>(rows_per_frame) * width);
        if (v.ring_rows == 0) {
            CUDA_TRY(cudaMemcpy(out.data(), v.data + static_cast<long>(item) * rows_per_frame * v.width,
                                out.size() * sizeof(float), cudaMemcpyDeviceToHost));
            return out;
        }
        const long t0 = static_cast<long>(it.frame) * rows_per_frame;
        const int start = static_cast<int>(t0 % v.ring_rows);
        const int first = std::min(rows_per_frame, v.ring_rows - start);
        const float* base = v.data + it.slot * v.slot_stride;
        CUDA_TRY(cudaMemcpy(out.data(), base + static_cast<long>(start) * v.width, first * width * sizeof(float),
                            cudaMemcpyDeviceToHost));
        if (first < rows_per_frame)
            CUDA_TRY(cudaMemcpy(out.data() + first * width, base, (rows_per_frame - first) * width * sizeof(float),
                                cudaMemcpyDeviceToHost));
        return out;
    }
};

cuda_vocoder::cuda_vocoder(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
cuda_vocoder::~cuda_vocoder() = default;

result<std::unique_ptr<cuda_vocoder>> cuda_vocoder::create(const ref::vocoder_weights& weights,
                                                           const cuda_vocoder_limits& limits) {
    if (limits.slots < 1 || limits.max_batch < 1 || limits.max_batch > voc::k_max_batch)
        return make_error(error_kind::invalid_input, "cuda vocoder: slots must be >= 1 and max_batch in 1.." +
                                                         std::to_string(voc::k_max_batch));
    auto p = std::make_unique<impl>();
    p->limits = limits;
    MEGATTS_TRY(p->setup(weights));
    return std::unique_ptr<cuda_vocoder>(new cuda_vocoder(std::move(p)));
}

result<void> cuda_vocoder::admit(int slot) {
    auto& p = *impl_;
    if (slot < 0 || slot >= p.limits.slots)
        return make_error(error_kind::invalid_input, "cuda vocoder: slot " + std::to_string(slot) + " does not exist");
    if (p.admitted[static_cast<std::size_t>(slot)])
        return make_error(error_kind::invalid_input,
                          "cuda vocoder: slot " + std::to_string(slot) + " is in use; release it first");
    p.admitted[static_cast<std::size_t>(slot)] = true;
    p.frames[static_cast<std::size_t>(slot)] = 0;
    return {};
}

void cuda_vocoder::release(int slot) {
    if (slot < 0 || slot >= impl_->limits.slots) return;
    impl_->admitted[static_cast<std::size_t>(slot)] = false;
    impl_->frames[static_cast<std::size_t>(slot)] = 0;
}

result<void> cuda_vocoder::vocode(std::span<const vocoder_frame> items, std::span<float> pcm) {
    MEGATTS_TRY(impl::check_room(items.size(), pcm, impl_->samples()));
    MEGATTS_TRY(launch(items));
    return collect(pcm);
}

result<void> cuda_vocoder::launch(std::span<const vocoder_frame> items) {
    auto& p = *impl_;
    if (p.broken) return make_error(error_kind::unavailable, "cuda vocoder: an earlier CUDA error disabled it");
    if (p.pending > 0)
        return make_error(error_kind::invalid_input, "cuda vocoder: launch() before the last launch's collect()");
    MEGATTS_TRY(p.check(items));
    auto launched = p.launch(items);
    if (!launched) p.broken = true;
    return launched;
}

result<void> cuda_vocoder::collect(std::span<float> pcm) {
    auto& p = *impl_;
    if (p.broken) return make_error(error_kind::unavailable, "cuda vocoder: an earlier CUDA error disabled it");
    if (p.pending == 0) return make_error(error_kind::invalid_input, "cuda vocoder: collect() without a launch()");
    MEGATTS_TRY(impl::check_room(static_cast<std::size_t>(p.pending), pcm, p.samples()));
    auto collected = p.collect(pcm);
    if (!collected) p.broken = true;
    return collected;
}

result<void> cuda_vocoder::queue_wait(void* stream) {
    auto& p = *impl_;
    if (p.broken) return make_error(error_kind::unavailable, "cuda vocoder: an earlier CUDA error disabled it");
    const cudaError_t queued = cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), p.done, 0);
    if (queued != cudaSuccess) p.broken = true;
    CUDA_TRY(queued);
    return {};
}

result<std::vector<float>> cuda_vocoder::read_stage(ref::vocoder_stage stage, int index, int item) const {
    const auto& p = *impl_;
    const auto& b = p.buffers;
    const auto& r = b.rows;
    if (p.broken) return make_error(error_kind::unavailable, "cuda vocoder: an earlier CUDA error disabled it");
    if (item < 0 || item >= static_cast<int>(p.last_items.size()))
        return make_error(error_kind::invalid_input, "cuda vocoder: the last call had no item " + std::to_string(item));
    using st = ref::vocoder_stage;
    switch (stage) {
    case st::dequant: return p.read_rows(b.codes_proj, item, 1);
    case st::pre_conv: return p.read_rows(b.pre_out, item, 1);
    case st::pre_transformer: return p.read_rows(b.pt_out, item, 1);
    case st::upsample:
        if (index == 0) return p.read_rows(b.up0_out, item, r.upsample_out[0]);
        if (index == 1) return p.read_rows(b.decoder0_in, item, r.upsample_out[1]);
        break;
    case st::decoder0: return p.read_rows(b.block_in[0], item, r.block_in[0]);
    case st::block:
        if (index >= 1 && index <= 3) return p.read_rows(b.block_in[static_cast<std::size_t>(index)], item,
                                                         r.block_in[static_cast<std::size_t>(index)]);
        if (index == 4) return p.read_rows(b.final_in, item, r.samples);
        break;
    case st::audio: return p.read_rows(b.audio, item, 1);
    case st::pt_input_proj:
    case st::pt_layer: break;
    }
    return make_error(error_kind::not_found,
                      "cuda vocoder: " + ref::vocoder_stage_name(stage, index) + " is not kept on the GPU");
}

void cuda_vocoder::time_calls(launch_timer* timer) { impl_->timer = timer; }

int cuda_vocoder::samples_per_frame() const { return impl_->samples(); }

int cuda_vocoder::frames_decoded(int slot) const {
    if (slot < 0 || slot >= impl_->limits.slots) return 0;
    return impl_->frames[static_cast<std::size_t>(slot)];
}

bool cuda_vocoder::frame_stack_for(int items) const {
    const auto& ops = impl_->bucket_for(items).program.ops;
    return std::any_of(ops.begin(), ops.end(), [](const voc::vocoder_op& op) { return std::holds_alternative<voc::stack_op>(op); });
}

int cuda_vocoder::cluster_sums_for(int items) const {
    const auto& ops = impl_->bucket_for(items).program.ops;
    return static_cast<int>(std::count_if(ops.begin(), ops.end(), [](const voc::vocoder_op& op) {
        const auto* g = std::get_if<voc::gemm_op>(&op);
        return g && g->params.cluster_sum;
    }));
}

bool cuda_vocoder::failed() const { return impl_->broken; }
std::size_t cuda_vocoder::weight_bytes() const { return impl_->weights.bytes; }
std::size_t cuda_vocoder::state_bytes_per_slot() const { return impl_->buffers.state_bytes_per_slot; }

}  // namespace megatts

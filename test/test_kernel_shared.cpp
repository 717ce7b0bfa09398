// The kernel executor on arrays of several warps: threads in lock step across
// warps, array_shift over the whole array, warp shuffles within each warp,
// barriers, and shared memory with its bound, initialisation and race checks.
// The kernels are built by hand, so each case says exactly what runs.
#include "TestUtil.h"

#include "exec/KernelExecutor.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;
using Catch::Matchers::Contains;

namespace {

/// Thread t = array.warp * 32 + lane of the array.
Expr thread_index() {
    return Variable::make(Int(32), kir::array_warp_var) * kir::warp_size + Variable::make(Int(32), kir::lane_var);
}

Expr lane() { return Variable::make(Int(32), kir::lane_var); }

Expr shared_load(const std::string &array, const Expr &index) {
    return Load::make(Int(32), array, index, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
}

Stmt shared_store(const std::string &array, const Expr &value, const Expr &index) {
    return Store::make(array, value, index, Parameter(), const_true(), ModulusRemainder());
}

Stmt allocate_shared(const std::string &array, int elements, const Stmt &body) {
    return Allocate::make(array, Int(32), Halide::MemoryType::GPUShared, {make_const(Int(32), elements)}, const_true(), body);
}

/// out[index] = value, unguarded (every test index lies inside).
Stmt store_output(const std::string &out, const Expr &value, const Expr &index) {
    return kir::store(out, const_true(), value, {index});
}

/// A kernel of `warps` warps per array over `instances` array instances,
/// writing the 1-D Int(32) outputs `outputs`.
kir::Kernel make_kernel(int warps, int instances, const std::vector<std::string> &outputs, const Stmt &body) {
    kir::Kernel k;
    k.name = "shared_test";
    for (const std::string &name : outputs) {
        kir::BufferArg arg;
        arg.name = name;
        arg.type = Int(32);
        arg.dimensions = 1;
        arg.is_output = true;
        k.buffers.push_back(arg);
    }
    if (instances > 1) k.grid.push_back({"instance", 0, make_const(Int(64), instances)});
    k.warps_per_array = warps;
    k.pe_count = (int64_t)warps * kir::warp_size;
    k.body = body;
    return k;
}

/// Output buffers of `elements` each, filled with -1 (never a value the kernels write).
Buffers outputs(const std::vector<std::string> &names, int elements) {
    Buffers b;
    for (const std::string &name : names) {
        Buffer<int32_t> out(elements);
        out.fill(-1);
        b[name] = out;
    }
    return b;
}

int32_t at(Buffers &b, const std::string &name, int i) { return Buffer<int32_t>(b.at(name))(i); }

/// Every thread t stores t * 10 into S[t], then (after a barrier if asked)
/// reads S[(t + 32) % 64] into Out[t]: across the two warps of the array.
kir::Kernel exchange_halves(bool with_barrier) {
    Expr t = thread_index();
    Stmt write = shared_store("S", t * 10, t);
    Stmt read = store_output("Out", shared_load("S", (t + 32) % 64), t);
    Stmt body = with_barrier ? Block::make({write, kir::barrier(), read}) : Block::make(write, read);
    return make_kernel(2, 1, {"Out"}, allocate_shared("S", 64, body));
}

}  // namespace

TEST_CASE("two warps exchange values through shared memory across a barrier", "[kernel][shared]") {
    Buffers b = outputs({"Out"}, 64);
    execute_kernel(exchange_halves(true), b);
    for (int t = 0; t < 64; t++) {
        INFO("thread " << t);
        CHECK(at(b, "Out", t) == (t + 32) % 64 * 10);
    }
}

TEST_CASE("a read of shared memory another thread wrote with no barrier between is a race", "[kernel][shared]") {
    Buffers b = outputs({"Out"}, 64);
    // Thread 0.0 reads S[32], which thread 1.0 wrote in the same epoch.
    REQUIRE_THROWS_WITH(execute_kernel(exchange_halves(false), b),
                        Contains("race on shared S[32]") && Contains("thread 1.0 wrote") && Contains("thread 0.0 reads") &&
                            Contains("no barrier between"));
}

TEST_CASE("a write to shared memory another thread read with no barrier between is a race", "[kernel][shared]") {
    // S[t] = t; barrier; v = S[t]; Out[t] = v; (barrier?) S[(t + 1) % 64] = -v.
    Expr t = thread_index();
    auto kernel = [&](bool barrier_before_write) {
        Expr v = Variable::make(Int(32), "v");
        std::vector<Stmt> after_read{store_output("Out", v, t)};
        if (barrier_before_write) after_read.push_back(kir::barrier());
        after_read.push_back(shared_store("S", -v, (t + 1) % 64));
        Stmt read_then_write = LetStmt::make("v", shared_load("S", t), Block::make(after_read));
        return make_kernel(2, 1, {"Out"},
                           allocate_shared("S", 64, Block::make({shared_store("S", t, t), kir::barrier(), read_then_write})));
    };
    Buffers b = outputs({"Out"}, 64);
    // Thread 0.0 writes S[1], which thread 0.1 read since the last barrier.
    REQUIRE_THROWS_WITH(execute_kernel(kernel(false), b),
                        Contains("race on shared S[1]") && Contains("thread 0.1 read") && Contains("thread 0.0 writes") &&
                            Contains("no barrier between"));
    Buffers ok = outputs({"Out"}, 64);
    REQUIRE_NOTHROW(execute_kernel(kernel(true), ok));
    for (int i = 0; i < 64; i++) CHECK(at(ok, "Out", i) == i);
}

TEST_CASE("two threads writing one shared element with no barrier between is a race", "[kernel][shared]") {
    // Threads 0.0 and 1.0 both write S[0].
    Stmt body = allocate_shared("S", 32, shared_store("S", thread_index(), lane()));
    Buffers b = outputs({}, 1);
    REQUIRE_THROWS_WITH(execute_kernel(make_kernel(2, 1, {}, body), b),
                        Contains("race on shared S[0]") && Contains("thread 0.0 wrote") && Contains("thread 1.0 writes"));
}

TEST_CASE("shared memory read before any write, or outside its extent, is an error", "[kernel][shared]") {
    Expr t = thread_index();
    Buffers b = outputs({"Out"}, 64);
    kir::Kernel unwritten = make_kernel(2, 1, {"Out"}, allocate_shared("S", 64, store_output("Out", shared_load("S", t), t)));
    REQUIRE_THROWS_WITH(execute_kernel(unwritten, b), Contains("reads shared S[0] before any write"));
    kir::Kernel outside = make_kernel(2, 1, {"Out"}, allocate_shared("S", 64, shared_store("S", t, t + 1)));
    REQUIRE_THROWS_WITH(execute_kernel(outside, b),
                        Contains("thread 1.31 indexes shared array S at 64, outside [0, 64)"));
}

TEST_CASE("a barrier inside divergent code is an error", "[kernel][shared]") {
    Buffers b = outputs({}, 1);
    // Some lanes of every warp skip it.
    kir::Kernel lanes = make_kernel(2, 1, {}, IfThenElse::make(lane() < 5, kir::barrier()));
    REQUIRE_THROWS_WITH(execute_kernel(lanes, b), Contains("shared_test") && Contains("barrier inside divergent code"));
    // Warp 0 takes it whole, but warp 1 of the array does not.
    Expr warp = Variable::make(Int(32), kir::array_warp_var);
    kir::Kernel one_warp = make_kernel(2, 1, {}, IfThenElse::make(warp == 0, kir::barrier()));
    REQUIRE_THROWS_WITH(execute_kernel(one_warp, b), Contains("barrier inside divergent code"));
    // A branch every thread takes is not divergent.
    kir::Kernel uniform = make_kernel(2, 1, {}, IfThenElse::make(kir::warp_index() >= 0, kir::barrier()));
    REQUIRE_NOTHROW(execute_kernel(uniform, b));
}

TEST_CASE("array_shift moves values across the warps of the array", "[kernel][shared]") {
    const int threads = 3 * kir::warp_size;
    Expr t = thread_index();
    Expr value = t * 7 + 1;
    Stmt body = LetStmt::make(
        "up", kir::array_shift(value, 3),
        LetStmt::make("down", kir::array_shift(value, -5),
                      Block::make(store_output("Up", Variable::make(Int(32), "up"), t),
                                  store_output("Down", Variable::make(Int(32), "down"), t))));
    Buffers b = outputs({"Up", "Down"}, threads);
    execute_kernel(make_kernel(3, 1, {"Up", "Down"}, body), b);
    for (int i = 0; i < threads; i++) {
        INFO("thread " << i);
        int up_source = i - 3 >= 0 ? i - 3 : i;
        int down_source = i + 5 < threads ? i + 5 : i;
        CHECK(at(b, "Up", i) == up_source * 7 + 1);
        CHECK(at(b, "Down", i) == down_source * 7 + 1);
    }
    // The crossing of warps 0 and 1, and 1 and 2, spelled out.
    CHECK(at(b, "Up", 32) == 29 * 7 + 1);
    CHECK(at(b, "Down", 60) == 65 * 7 + 1);
    CHECK(at(b, "Down", 91) == 91 * 7 + 1);
}

TEST_CASE("warp shuffles on a multi-warp array stay within each warp", "[kernel][shared]") {
    const int threads = 2 * kir::warp_size;
    Expr t = thread_index();
    Expr value = t * 3 + 2;
    Stmt body = LetStmt::make(
        "up", kir::shuffle(kir::intrinsic::shfl_up, value, 1),
        LetStmt::make(
            "down", kir::shuffle(kir::intrinsic::shfl_down, value, 1),
            LetStmt::make("first", kir::shuffle(kir::intrinsic::shfl_idx, value, 0),
                          Block::make({store_output("Up", Variable::make(Int(32), "up"), t),
                                       store_output("Down", Variable::make(Int(32), "down"), t),
                                       store_output("First", Variable::make(Int(32), "first"), t)}))));
    Buffers b = outputs({"Up", "Down", "First"}, threads);
    execute_kernel(make_kernel(2, 1, {"Up", "Down", "First"}, body), b);
    for (int i = 0; i < threads; i++) {
        INFO("thread " << i);
        int l = i % kir::warp_size, base = i - l;
        CHECK(at(b, "Up", i) == (l >= 1 ? i - 1 : i) * 3 + 2);
        CHECK(at(b, "Down", i) == (l + 1 < kir::warp_size ? i + 1 : i) * 3 + 2);
        CHECK(at(b, "First", i) == base * 3 + 2);
    }
    // Thread 32 (lane 0 of warp 1) keeps its own value, not thread 31's.
    CHECK(at(b, "Up", 32) == 32 * 3 + 2);
    CHECK(at(b, "Down", 31) == 31 * 3 + 2);
}

TEST_CASE("a lane exchange where a whole other warp of the array is masked off is an error", "[kernel][shared]") {
    Expr warp = Variable::make(Int(32), kir::array_warp_var);
    Expr t = thread_index();
    Stmt exchange = LetStmt::make("x", kir::shuffle(kir::intrinsic::shfl_up, t, 1),
                                  store_output("Out", Variable::make(Int(32), "x"), t));
    Buffers b = outputs({"Out"}, 64);
    REQUIRE_THROWS_WITH(execute_kernel(make_kernel(2, 1, {"Out"}, IfThenElse::make(warp == 0, exchange)), b),
                        Contains("lane exchange pulse.shfl_up inside divergent code"));
}

TEST_CASE("every array instance of the grid has its own shared memory", "[kernel][shared]") {
    const int instances = 3, threads = 2 * kir::warp_size;
    Expr t = thread_index();
    Expr instance = cast(Int(32), kir::warp_index());
    // S[t] = instance * 1000 + t; barrier; Out[instance * 64 + t] = S[63 - t].
    Stmt body = allocate_shared("S", threads,
                                Block::make({shared_store("S", instance * 1000 + t, t), kir::barrier(),
                                             store_output("Out", shared_load("S", threads - 1 - t), instance * threads + t)}));
    Buffers b = outputs({"Out"}, instances * threads);
    execute_kernel(make_kernel(2, instances, {"Out"}, body), b);
    for (int w = 0; w < instances; w++) {
        for (int i = 0; i < threads; i++) {
            INFO("instance " << w << " thread " << i);
            CHECK(at(b, "Out", w * threads + i) == w * 1000 + threads - 1 - i);
        }
    }
    // Instance 1 does not see what instance 0 wrote: its array is new.
    Stmt write_or_read = IfThenElse::make(instance == 0, shared_store("S", t, t),
                                          store_output("Out", shared_load("S", t), instance * threads + t));
    REQUIRE_THROWS_WITH(execute_kernel(make_kernel(2, 2, {"Out"}, allocate_shared("S", threads, write_or_read)), b),
                        Contains("thread 0.0 reads shared S[0] before any write"));
}

namespace {

/// A grid-synchronised kernel of `instances` one-warp arrays: each lane
/// writes instance * 100 + lane to the exchange X (its instance's 32
/// elements), then, after a grid barrier if asked, reads the next
/// instance's element into Out. `skip_on_first` leaves the barrier out on instance 0.
kir::Kernel exchange_across_instances(int instances, bool with_barrier, bool skip_on_first = false) {
    Expr instance = cast(Int(32), kir::warp_index());
    Stmt write = Store::make("X", instance * 100 + lane(), instance * 32 + lane(), Parameter(), const_true(), ModulusRemainder());
    Stmt read = store_output("Out", shared_load("X", (instance + 1) % instances * 32 + lane()), instance * 32 + lane());
    Stmt barrier = skip_on_first ? IfThenElse::make(instance != 0, kir::grid_barrier()) : kir::grid_barrier();
    kir::Kernel k = make_kernel(1, instances, {"Out"}, with_barrier ? Block::make({write, barrier, read}) : Block::make(write, read));
    k.grid_sync = true;
    k.grid_exchanges.push_back({"X", Int(32), 1, 32});
    return k;
}

}  // namespace

TEST_CASE("grid-synchronised instances run at once and exchange values across a grid barrier", "[kernel][shared]") {
    const int instances = 5;
    Buffers b = outputs({"Out"}, instances * 32);
    execute_kernel(exchange_across_instances(instances, true), b);
    for (int w = 0; w < instances; w++) {
        for (int l = 0; l < 32; l++) {
            INFO("instance " << w << " lane " << l);
            CHECK(at(b, "Out", w * 32 + l) == (w + 1) % instances * 100 + l);
        }
    }
}

TEST_CASE("the executor catches what a grid barrier would have prevented, and barriers not every instance reaches", "[kernel][shared]") {
    Buffers b = outputs({"Out"}, 3 * 32);
    // No barrier: a read of an element another instance writes in the same
    // phase (a race), or before it writes it at all, depending on who runs first.
    REQUIRE_THROWS_WITH(execute_kernel(exchange_across_instances(3, false), b),
                        Contains("race on grid exchange X[") || Contains("reads grid exchange X[") && Contains("before any write"));
    // Instance 0 leaves out the barrier: it reads X[32] before instance 1
    // writes it, or after with no barrier between (whichever thread runs first).
    REQUIRE_THROWS_WITH(execute_kernel(exchange_across_instances(3, true, true), b),
                        Contains("reads grid exchange X[32] before any write") ||
                            Contains("race on grid exchange X[32]: instance 1 wrote it and instance 0 reads it"));
    // Instance 0 never reaches the barrier the others wait at: a hang on the GPU.
    kir::Kernel unmatched = exchange_across_instances(3, true);
    unmatched.body = IfThenElse::make(cast(Int(32), kir::warp_index()) != 0, kir::grid_barrier());
    REQUIRE_THROWS_WITH(execute_kernel(unmatched, b),
                        Contains("grid barrier") && (Contains("never reached") || Contains("without reaching")));
    // A grid barrier inside divergent code, and one in a kernel that is not synchronised.
    kir::Kernel divergent = exchange_across_instances(2, true);
    divergent.body = IfThenElse::make(lane() < 16, kir::grid_barrier());
    REQUIRE_THROWS_WITH(execute_kernel(divergent, b), Contains("grid barrier inside divergent code"));
    kir::Kernel plain = make_kernel(1, 2, {"Out"}, kir::grid_barrier());
    REQUIRE_THROWS_WITH(execute_kernel(plain, b), Contains("in a kernel without grid_sync"));
}

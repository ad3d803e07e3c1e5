//! [`Inst`] to text, exactly as `llvm-objdump-19 -d --mcpu=gfx1100` prints it
//! (wave32 register names), without the address/bytes comment.

use crate::consts::{inline_code, inline_text, literal_text};
use crate::decode::LIT_SRC0;
use crate::{
    flags, mimg, sreg, sym, Encoding, Format, Implicit, Inst, LaneSel, Op, Operand, Sdwa, Special,
    Ty,
};

pub(crate) mod gfx9_mem;

/// How to print: the wave size changes the names of lane-mask operands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DisasmOptions {
    /// Wave64 code: lane masks are SGPR pairs (`vcc`, `s[0:1]`), as
    /// `llvm-objdump-19 --mattr=+wavefrontsize64` prints them.
    pub wave64: bool,
}

/// Print one decoded instruction of wave32 code.
pub fn disassemble(inst: &Inst) -> String {
    disassemble_with(inst, &DisasmOptions::default())
}

/// Print one decoded instruction of wave64 code.
pub fn disassemble_wave64(inst: &Inst) -> String {
    disassemble_with(inst, &DisasmOptions { wave64: true })
}

/// What llvm-objdump-19 prints where it cannot decode an instruction: the
/// all-zero word is `v_illegal` (LLVM's name for it), any other word shows
/// as data, `.long 0x…`. Like [`crate::decode_all`], it then goes on 4
/// bytes later.
pub fn undecodable_text(bytes: &[u8]) -> String {
    let mut word = [0u8; 4];
    let n = bytes.len().min(4);
    word[..n].copy_from_slice(&bytes[..n]);
    match u32::from_le_bytes(word) {
        0 => "v_illegal".into(),
        w => format!(".long {w:#010x}"),
    }
}

/// How the instruction's family encodes its op: the form printed.
fn encoding(inst: &Inst) -> Encoding {
    let info = inst.op.info();
    inst.op.encoding(inst.family).copied().unwrap_or(Encoding {
        format: info.format,
        opcode: 0,
        vop3: None,
        vopd_y: None,
    })
}

thread_local! {
    /// The family whose register names apply (gfx9 names s102-s105), for
    /// the one instruction [`disassemble_with`] is printing: set there so
    /// every operand printer need not carry it.
    static NAMES: std::cell::Cell<crate::Family> = const { std::cell::Cell::new(crate::Family::Gfx11) };
}

fn gfx9(inst: &Inst) -> bool {
    matches!(inst.family, crate::Family::Gfx90a | crate::Family::Gfx94)
}

fn gfx9_names() -> bool {
    matches!(
        NAMES.with(|f| f.get()),
        crate::Family::Gfx90a | crate::Family::Gfx94
    )
}

/// Print one decoded instruction with explicit options.
pub fn disassemble_with(inst: &Inst, opts: &DisasmOptions) -> String {
    NAMES.with(|f| f.set(inst.family));
    if let Some(text) = gfx9_mem::text(inst) {
        return text;
    }
    let info = inst.op.info();
    let (mnemonic, operands) = match encoding(inst).format {
        Format::Sop1 | Format::Sop2 | Format::Sopc => (info.name.to_string(), salu(inst)),
        Format::Sopk => (info.name.to_string(), sopk(inst)),
        Format::Sopp => (info.name.to_string(), sopp(inst)),
        Format::Smem => (info.name.to_string(), smem(inst)),
        Format::Vop3p => (info.name.to_string(), vop3p(inst, opts.wave64)),
        Format::Mai => (info.name.to_string(), mai(inst)),
        Format::Vopd => return vopd(inst),
        Format::Ds => (info.name.to_string(), ds(inst)),
        Format::Flat | Format::Global | Format::Scratch => {
            (info.name.to_string(), flat(inst, opts.wave64))
        }
        Format::Mubuf | Format::Mtbuf => (info.name.to_string(), buffer(inst)),
        Format::Mimg => (info.name.to_string(), mimg::text(info.name, inst)),
        Format::Exp => (info.name.to_string(), exp(inst)),
        Format::Vinterp => (info.name.to_string(), vinterp(inst)),
        Format::LdsDirect => (info.name.to_string(), lds_direct(inst)),
        _ if inst.family == crate::Family::Gfx10 && info.name.starts_with("v_interp_") => {
            interp_gfx10(inst)
        }
        _ => (valu_mnemonic(inst), valu(inst, opts.wave64)),
    };
    if operands.is_empty() {
        mnemonic
    } else {
        format!("{mnemonic} {operands}")
    }
}

// ---- operands --------------------------------------------------------------

pub(crate) fn sgpr_name(n: u8, dwords: u8) -> String {
    let last = n as u32 + dwords.max(1) as u32 - 1;
    if let Some(name) = gfx9_names().then(|| gfx9_sgpr_name(n, dwords)).flatten() {
        return name.into();
    }
    match (n, dwords) {
        (0..=105, 0 | 1) => format!("s{n}"),
        (0..=105, _) => format!("s[{n}:{last}]"),
        (sreg::VCC_LO, 2) => "vcc".into(),
        (sreg::EXEC_LO, 2) => "exec".into(),
        (106, _) => "vcc_lo".into(),
        (107, _) => "vcc_hi".into(),
        (108..=123, 0 | 1) => format!("ttmp{}", n - 108),
        (108..=123, _) => format!("ttmp[{}:{}]", n - 108, last - 108),
        (sreg::NULL, _) => "null".into(),
        (sreg::M0, _) => "m0".into(),
        (sreg::EXEC_LO, _) => "exec_lo".into(),
        (sreg::EXEC_HI, _) => "exec_hi".into(),
        _ => format!("s{n}"),
    }
}

/// gfx9's names for s102-s105: flat_scratch and xnack_mask, each a pair.
fn gfx9_sgpr_name(n: u8, dwords: u8) -> Option<&'static str> {
    Some(match (n, dwords) {
        (102, 2) => "flat_scratch",
        (104, 2) => "xnack_mask",
        (102, 0 | 1) => "flat_scratch_lo",
        (103, 0 | 1) => "flat_scratch_hi",
        (104, 0 | 1) => "xnack_mask_lo",
        (105, 0 | 1) => "xnack_mask_hi",
        _ => return None,
    })
}

/// A VGPR range, or CDNA's AccVGPRs (numbered from [`crate::AGPR_BASE`]):
/// `aN`, `a[lo:hi]`.
pub(crate) fn vgpr_name(n: u16, dwords: u8) -> String {
    let (file, n) = match n.checked_sub(crate::AGPR_BASE) {
        Some(a) => ('a', a),
        None => ('v', n),
    };
    if dwords <= 1 {
        format!("{file}{n}")
    } else {
        format!("{file}[{n}:{}]", n as u32 + dwords as u32 - 1)
    }
}

fn special_name(s: Special) -> &'static str {
    match s {
        Special::Scc => "src_scc",
        Special::Vccz => "src_vccz",
        Special::Execz => "src_execz",
        Special::SharedBase => "src_shared_base",
        Special::SharedLimit => "src_shared_limit",
        Special::PrivateBase => "src_private_base",
        Special::PrivateLimit => "src_private_limit",
        Special::PopsExitingWaveId => "src_pops_exiting_wave_id",
        Special::LdsDirect => "src_lds_direct",
    }
}

/// An inline constant, the way LLVM names it for an operand of type `ty`.
fn const_text(v: u64, ty: Ty) -> String {
    inline_code(v, ty)
        .and_then(|c| inline_text(c, ty))
        .unwrap_or_else(|| format!("{v:#x}"))
}

/// The type whose printing rule LLVM applies to a literal in a source of
/// type `ty` (its operand types differ from the data types in a few places).
fn literal_ty(inst: &Inst, ty: Ty) -> Ty {
    let name = inst.op.name();
    let half = matches!(ty, Ty::F16 | Ty::B16 | Ty::BF16);
    // gfx12's WMMA prints a literal C by its element type: f32/i32 ones as
    // 32-bit values, f16 ones as f16, bf16 ones as bf16.
    if inst.family == crate::Family::Gfx12 && name.starts_with("v_wmma_") {
        if name.starts_with("v_wmma_f16") {
            return Ty::F16;
        }
        if name.starts_with("v_wmma_bf16") {
            return Ty::BF16;
        }
        return Ty::B32;
    }
    match encoding(inst).format {
        // SOP1's f16 sources keep (and show) the whole 32-bit literal.
        Format::Sop1 if half => Ty::B32,
        // SOPC's f16 compares print it as a 16-bit integer operand.
        Format::Sopc if half => Ty::B16,
        // fma_mix sources show the low 16 bits, as f16, whatever op_sel_hi says.
        _ if name.starts_with("v_fma_mix") => Ty::F16,
        _ => ty,
    }
}

fn operand(op: Operand, ty: Ty) -> String {
    let dw = ty.dwords();
    match op {
        Operand::None => String::new(),
        Operand::Sgpr(n) => sgpr_name(n, dw),
        Operand::Vgpr(n) => vgpr_name(n, dw),
        // LLVM's gfx11 printer is fake16: the high half vN.h shows as v(N+128).
        Operand::VgprHi(n) => format!("v{}", n + 128),
        Operand::Const(v) => const_text(v, ty),
        Operand::Special(s) => special_name(s).into(),
    }
}

/// Source `k` of `inst` with its abs/neg modifiers.
fn src(inst: &Inst, k: usize) -> String {
    src_as(inst, k, inst.op.info().src[k])
}

/// Source `k` printed as type `ty`.
fn src_as(inst: &Inst, k: usize, ty: Ty) -> String {
    src_lit(inst, k, ty, literal_ty(inst, ty))
}

/// Source `k` printed as type `ty`, a literal by the rule of `lit_ty`.
fn src_lit(inst: &Inst, k: usize, ty: Ty, lit_ty: Ty) -> String {
    let info = inst.op.info();
    let lit = inst.flags & (LIT_SRC0 << k) != 0;
    // The K of fmaak/fmamk always prints as the whole word in hex.
    let mk = (k == 2 && (info.name.contains("fmaak") || info.name.contains("madak")))
        || (k == 1 && (info.name.contains("fmamk") || info.name.contains("madmk")));
    let mut s = match (lit, mk) {
        (true, true) => format!("{:#x}", inst.aux),
        (true, false) => literal_text(inst.aux, lit_ty),
        _ => operand(inst.src[k], ty) + high_half_note(inst, k),
    };
    // v_ldexp_f16's DPP16 form treats its exponent as an integer operand:
    // the neg bit shows as sext(), abs is ignored.
    if k == 1 && info.name == "v_ldexp_f16" && matches!(inst.lane_sel, LaneSel::Dpp16 { .. }) {
        return if inst.mods.neg & 2 != 0 {
            format!("sext({s})")
        } else {
            s
        };
    }
    // gfx9's v_cvt_pk_u8_f32 shows its integer sources' neg bits as sext.
    let pk_u8 = gfx9(inst) && info.name == "v_cvt_pk_u8_f32" && k > 0;
    if inst.sdwa.is_some_and(|d| d.sext >> k & 1 != 0) || (pk_u8 && inst.mods.neg >> k & 1 != 0) {
        s = format!("sext({s})");
    }
    // LLVM has no source modifiers on integer operands (it ignores the bits).
    // gfx10's v_ldexp_f16 takes its exponent as an integer.
    // So does gfx9's, and its v_cvt_pkaccum_u8_f32 (byte index) and
    // gfx940's v_cvt_sr_* (random seed) take integers there.
    let int_exp = k == 1
        && ((info.name == "v_ldexp_f16" && (inst.family == crate::Family::Gfx10 || gfx9(inst)))
            || info.name == "v_cvt_pkaccum_u8_f32"
            || (gfx9(inst) && info.name.starts_with("v_cvt_sr_")));
    let float = (matches!(ty, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64 | Ty::V2F16) && !int_exp)
        || info.name.starts_with("v_cndmask")
        || info.name.starts_with("v_dot2_bf16");
    if float && inst.mods.abs >> k & 1 != 0 {
        s = format!("|{s}|");
    }
    if float && inst.mods.neg >> k & 1 != 0 {
        // gfx9 spells a negated constant neg(N) (-N would read as another
        // constant).
        let constant = matches!(inst.src[k], Operand::Const(_));
        let int = gfx9(inst) && inst.mods.abs >> k & 1 == 0 && constant;
        s = if int {
            format!("neg({s})")
        } else {
            format!("-{s}")
        };
    }
    s
}

/// LLVM 19's gfx11 printer is fake16 for all but `v_mov_b16`: it knows no
/// high halves in the 32-bit encodings, so it prints a true16 source `vN.h`
/// as v(N+128) and flags that register as outside the operand's class.
fn high_half_note(inst: &Inst, k: usize) -> &'static str {
    let Operand::VgprHi(_) = inst.src[k] else {
        return "";
    };
    if k == 0 && inst.lane_sel == LaneSel::None {
        "/*Invalid register, operand has 'VS_32_Lo128' register class*/"
    } else {
        "/*Invalid register, operand has 'VGPR_32_Lo128' register class*/"
    }
}

/// A VGPR of `v_mov_b16`, which LLVM 19 prints with true16 names.
fn true16_name(op: Operand) -> Option<String> {
    match op {
        Operand::Vgpr(n) => Some(format!("v{n}.l")),
        Operand::VgprHi(n) => Some(format!("v{n}.h")),
        _ => None,
    }
}

fn join(parts: Vec<String>) -> String {
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(", ")
}

fn present_srcs(inst: &Inst) -> Vec<String> {
    let info = inst.op.info();
    (0..3)
        .filter(|&k| info.src[k] != Ty::None)
        .map(|k| src(inst, k))
        .collect()
}

// ---- scalar ----------------------------------------------------------------

fn salu(inst: &Inst) -> String {
    let info = inst.op.info();
    // gfx9's SOP2 forks and rfe_restore have no destination (the table
    // types their first operand as one); s_set_gpr_idx_on's src1 is a mask.
    match info.name {
        "s_cbranch_g_fork" => {
            return join(vec![
                operand(inst.src[0], Ty::B64),
                operand(inst.src[1], Ty::B64),
            ])
        }
        "s_rfe_restore_b64" => {
            return join(vec![
                operand(inst.src[0], Ty::B64),
                operand(inst.src[1], Ty::B32),
            ])
        }
        "s_set_gpr_idx_on" => {
            let Operand::Const(mask) = inst.src[1] else {
                return String::new();
            };
            return format!("{}, {}", src(inst, 0), sym::gpr_idx(mask as u16));
        }
        _ => {}
    }
    let mut parts = vec![operand(inst.dst[0], info.dst[0])];
    if info.name.starts_with("s_sendmsg_rtn") {
        if let Operand::Const(n) = inst.src[0] {
            parts.push(sym::sendmsg(n as u16));
        }
        return join(parts);
    }
    parts.extend(present_srcs(inst));
    join(parts)
}

fn sopk(inst: &Inst) -> String {
    let info = inst.op.info();
    let imm = inst.imm as u16;
    let reg = |op: Operand| operand(op, Ty::B32.max_dwords(info.dst[0]));
    match info.name {
        "s_version" => sym::version(imm),
        "s_subvector_loop_begin" | "s_subvector_loop_end" => {
            format!("{}, {imm}", reg(inst.src[0]))
        }
        "s_call_b64" => format!("{}, {imm}", operand(inst.dst[0], Ty::B64)),
        "s_cbranch_i_fork" => format!("{}, {imm}", operand(inst.dst[0], Ty::B64)),
        "s_getreg_b32" => format!("{}, {}", reg(inst.dst[0]), sym::hwreg(imm, inst.family)),
        "s_setreg_b32" => format!("{}, {}", sym::hwreg(imm, inst.family), reg(inst.src[0])),
        "s_setreg_imm32_b32" => format!("{}, {}", sym::hwreg(imm, inst.family), src(inst, 0)),
        _ => {
            let r = if info.dst[0] != Ty::None {
                inst.dst[0]
            } else {
                inst.src[0]
            };
            format!("{}, {imm:#x}", reg(r))
        }
    }
}

impl Inst {
    /// For a relative branch (`s_branch`, `s_cbranch_*`), where it goes:
    /// the target's byte offset from the branch's own address (the next
    /// instruction's plus the signed dword count), as LLVM's disassembler
    /// resolves it for its `<symbol+offset>` annotation.
    pub fn branch_offset(&self) -> Option<i64> {
        let name = self.op.name();
        let branch = name.starts_with("s_branch") || name.starts_with("s_cbranch");
        (self.op.info().format == Format::Sopp && branch)
            .then(|| 4 + 4 * i64::from(self.imm as u16 as i16))
    }
}

fn sopp(inst: &Inst) -> String {
    let imm = inst.imm as u16;
    let name = inst.op.name();
    match name {
        "s_waitcnt" if inst.family == crate::Family::Gfx10 => sym::waitcnt_gfx10(imm),
        "s_waitcnt" if gfx9(inst) => sym::waitcnt_gfx9(imm),
        "s_set_gpr_idx_mode" => sym::gpr_idx(imm),
        "s_set_gpr_idx_off" => String::new(),
        "s_waitcnt" => sym::waitcnt(imm),
        "s_delay_alu" => sym::delay_alu(imm),
        "s_waitcnt_depctr" | "s_wait_alu" => sym::depctr(imm),
        "s_sendmsg" | "s_sendmsghalt" if inst.family == crate::Family::Gfx10 => {
            sym::sendmsg_gfx10(imm)
        }
        "s_sendmsg" | "s_sendmsghalt" if gfx9(inst) => sym::sendmsg_gfx9(imm),
        "s_sendmsg" | "s_sendmsghalt" => sym::sendmsg(imm),
        "s_endpgm" if imm == 0 => String::new(),
        "s_endpgm" => imm.to_string(),
        "s_wait_idle"
        | "s_code_end"
        | "s_endpgm_saved"
        | "s_wakeup"
        | "s_ttracedata"
        | "s_icache_inv"
        | "s_barrier"
        | "s_barrier_leave"
        | "s_endpgm_ordered_ps_done" => String::new(),
        // gfx12's split counters print their count in hex.
        _ if name.starts_with("s_wait_") && name.ends_with("cnt") => format!("{imm:#x}"),
        "s_set_inst_prefetch_distance"
        | "s_clause"
        | "s_wait_event"
        | "s_singleuse_vdst"
        | "s_round_mode"
        | "s_inst_prefetch"
        | "s_ttracedata_imm" => {
            format!("{imm:#x}")
        }
        _ if name.starts_with("s_branch") || name.starts_with("s_cbranch") => imm.to_string(),
        _ => sym::u16_imm(imm),
    }
}

fn smem(inst: &Inst) -> String {
    let info = inst.op.info();
    if info.name.contains("prefetch") {
        return prefetch(inst);
    }
    if info.src[0] == Ty::None && info.dst[0] == Ty::None {
        // s_dcache_inv: gfx11 prints its glc/dlc bits, gfx12 nothing.
        return match inst.family {
            crate::Family::Gfx11 => policy(inst).trim_start().to_string(),
            crate::Family::Gfx10 | crate::Family::Gfx90a | crate::Family::Gfx94 => String::new(),
            crate::Family::Gfx12 => String::new(),
        };
    }
    // s_atc_probe names its probe mode where others name sdata; gfx9's
    // stores and atomics print their data (src2) there.
    let first = if info.name.starts_with("s_atc_probe") && gfx9(inst) {
        sym::u16_imm(inst.aux as u16)
    } else if info.name.starts_with("s_atc_probe") {
        inst.aux.to_string()
    } else if info.src[2] != Ty::None {
        operand(inst.src[2], info.src[2])
    } else {
        operand(inst.dst[0], info.dst[0])
    };
    let mut parts = vec![first, operand(inst.src[0], info.src[0])];
    let off = if inst.imm < 0 {
        format!("-{:#x}", -(inst.imm as i64))
    } else {
        format!("{:#x}", inst.imm)
    };
    let mut tail = String::new();
    if inst.src[1] != Operand::None {
        parts.push(operand(inst.src[1], Ty::B32));
        // gfx12 prints the offset beside soffset even when it is 0.
        if inst.imm != 0 || inst.family == crate::Family::Gfx12 {
            tail = format!(" offset:{off}");
        }
    } else if info.src[0] != Ty::None {
        // gfx11 prints a zero offset with soffset = null as the null
        // register; gfx12 prints the offset.
        let null =
            inst.imm == 0 && matches!(inst.family, crate::Family::Gfx11 | crate::Family::Gfx10);
        parts.push(if null { "null".into() } else { off });
    }
    // Only loads carry a cache policy (gfx12's s_atc_probe has none).
    // gfx9: loads, stores and atomics (not the probes and discards).
    let gfx9_data = gfx9(inst)
        && ["load", "store", "atomic"]
            .iter()
            .any(|t| info.name.contains(t));
    let policy = if info.name.contains("load") || inst.family == crate::Family::Gfx11 || gfx9_data {
        policy(inst)
    } else {
        String::new()
    };
    format!("{}{tail}{policy}", join(parts))
}

/// gfx12's `s_prefetch_*`: [sbase,] offset, soffset (or null), and the
/// size the sdata field holds.
fn prefetch(inst: &Inst) -> String {
    let info = inst.op.info();
    let mut parts = Vec::new();
    if info.src[0] != Ty::None {
        parts.push(operand(inst.src[0], info.src[0]));
    }
    parts.push(if inst.imm < 0 {
        format!("-{:#x}", -(inst.imm as i64))
    } else {
        format!("{:#x}", inst.imm)
    });
    parts.push(match inst.src[1] {
        Operand::None => "null".into(),
        soff => operand(soff, Ty::B32),
    });
    parts.push(inst.aux.to_string());
    join(parts)
}

/// A memory instruction's cache policy as its family spells it: gfx11's
/// glc/slc/dlc bits, gfx12's temporal hint and scope.
pub(crate) fn policy(inst: &Inst) -> String {
    match inst.family {
        // gfx10 spells glc/slc/dlc as gfx11 does.
        crate::Family::Gfx11 | crate::Family::Gfx10 => cache_text(inst.flags),
        crate::Family::Gfx12 => th_scope(inst),
        crate::Family::Gfx90a | crate::Family::Gfx94 => cache_text(inst.flags),
    }
}

/// ` th:NAME scope:NAME` (each omitted at 0), named as llvm-objdump-19 names
/// them for the kind of access: loads, stores and atomics name the hint
/// bits differently, and a few names depend on the scope.
fn th_scope(inst: &Inst) -> String {
    let th = inst.cache & crate::cache::TH;
    let scope = inst.cache >> crate::cache::SCOPE_SHIFT;
    let info = inst.op.info();
    let mut s = String::new();
    if th != 0 {
        let sys = scope == 3;
        let name = if info.implicit.has(Implicit::ATOMIC) {
            match th {
                1 => "TH_ATOMIC_RETURN".to_string(),
                2 => "TH_ATOMIC_NT".to_string(),
                3 => "TH_ATOMIC_NT_RETURN".to_string(),
                // The cascade hints exist at device and system scope only.
                4 | 5 if scope >= 2 => "TH_ATOMIC_CASCADE_RT".to_string(),
                _ if scope >= 2 => "TH_ATOMIC_CASCADE_NT".to_string(),
                _ => format!("TH_ATOMIC_{th:#x}"),
            }
        } else if info.dst[0] == Ty::None && info.name.contains("store") {
            match th {
                1 => "TH_STORE_NT",
                2 => "TH_STORE_HT",
                3 if sys => "TH_STORE_BYPASS",
                3 => "TH_STORE_RT_WB",
                4 => "TH_STORE_NT_RT",
                5 => "TH_STORE_RT_NT",
                6 => "TH_STORE_NT_HT",
                _ => "TH_STORE_NT_WB",
            }
            .to_string()
        } else {
            match th {
                1 => "TH_LOAD_NT",
                2 => "TH_LOAD_HT",
                3 if sys => "TH_LOAD_BYPASS",
                3 => "TH_LOAD_LU",
                4 => "TH_LOAD_NT_RT",
                5 => "TH_LOAD_RT_NT",
                6 => "TH_LOAD_NT_HT",
                _ => "0x7",
            }
            .to_string()
        };
        s.push_str(&format!(" th:{name}"));
    }
    if scope != 0 {
        let name = ["SCOPE_SE", "SCOPE_DEV", "SCOPE_SYS"][scope as usize - 1];
        s.push_str(&format!(" scope:{name}"));
    }
    s
}

fn cache_text(f: u16) -> String {
    let mut s = String::new();
    for (bit, name) in [
        (flags::GLC, " glc"),
        (flags::SLC, " slc"),
        (flags::DLC, " dlc"),
    ] {
        if f & bit != 0 {
            s.push_str(name);
        }
    }
    s
}

// ---- vector ALU --------------------------------------------------------------

fn valu_mnemonic(inst: &Inst) -> String {
    let info = inst.op.info();
    let enc = encoding(inst);
    let short_fmt = matches!(enc.format, Format::Vop1 | Format::Vop2 | Format::Vopc);
    // Only ops with both a short and a VOP3 form name the form they use.
    // (v_mov_b16 has one too, which LLVM 19 decodes only in true16 mode.)
    // (gfx9's v_pk_fmac_f16 has only the 32-bit form, yet names it.)
    let two_forms = short_fmt
        && (enc.vop3.is_some()
            || info.name == "v_mov_b16"
            || (gfx9(inst) && info.name == "v_pk_fmac_f16"))
        && !matches!(info.name, "v_nop" | "v_pipeflush" | "v_clrexcp");
    let e64 = inst.flags & flags::E64 != 0;
    let dpp = inst.lane_sel != LaneSel::None;
    if inst.sdwa.is_some() {
        return format!("{}_sdwa", info.name);
    }
    let suffix = match (two_forms, e64, dpp) {
        (true, false, false) => "_e32",
        (true, true, false) => "_e64",
        (_, false, true) if enc.format == Format::Vopc => "",
        (_, false, true) if short_fmt => "_dpp",
        (_, _, true) => "_e64_dpp",
        _ => "",
    };
    format!("{}{suffix}", info.name)
}

/// The printed type of a lane mask.
fn mask(ty: Ty, wave64: bool) -> Ty {
    if wave64 && ty == Ty::Mask {
        Ty::B64
    } else {
        ty
    }
}

/// A lane-mask operand: in wave64 an SGPR pair, whose low bit LLVM ignores.
fn mask_operand(op: Operand, ty: Ty, wave64: bool) -> String {
    match op {
        Operand::Sgpr(n) if wave64 && ty == Ty::Mask && n < sreg::VCC_LO => {
            operand(Operand::Sgpr(n & !1), Ty::B64)
        }
        _ => operand(op, mask(ty, wave64)),
    }
}

fn valu(inst: &Inst, wave64: bool) -> String {
    let s = valu_with(inst, wave64, None);
    // llvm-objdump-19 closes a gfx12 DPP v_cndmask_b32's src1 |abs| after
    // the mask operand (`-|v4, vcc_lo|`); the same text is printed here.
    let dpp_cndmask = inst.family == crate::Family::Gfx12
        && inst.op == Op::V_CNDMASK_B32
        && inst.lane_sel != LaneSel::None
        && inst.flags & flags::E64 == 0;
    match s.find("|, vcc").filter(|_| dpp_cndmask) {
        Some(at) => {
            let mask_end = s[at + 3..].find(' ').map_or(s.len(), |e| at + 3 + e);
            format!("{}{}|{}", &s[..at], &s[at + 1..mask_end], &s[mask_end..])
        }
        None => s,
    }
}

/// VALU operands; `lit_ty` overrides the type a literal source prints as.
fn valu_with(inst: &Inst, wave64: bool, lit_ty: Option<Ty>) -> String {
    let info = inst.op.info();
    let mut parts = Vec::new();
    // gfx9's v_cmpx also writes its sdst (the table types it).
    let cmpx = info.name.starts_with("v_cmpx") && info.dst[0] == Ty::None;
    if info.name.starts_with("v_swap") {
        parts.push(operand(inst.dst[0], info.dst[0]));
        parts.push(operand(inst.src[0], info.src[0]));
        return join(parts);
    }
    if info.name == "v_mov_b16" {
        parts.push(true16_name(inst.dst[0]).unwrap_or_default());
        parts.push(true16_name(inst.src[0]).unwrap_or_else(|| src(inst, 0)));
        return join(parts) + &lane_sel_text(inst.lane_sel);
    }
    if !cmpx {
        parts.push(mask_operand(inst.dst[0], info.dst[0], wave64));
    }
    if info.dst[1] != Ty::None {
        parts.push(mask_operand(inst.dst[1], info.dst[1], wave64));
    }
    let n = if info.implicit.has(Implicit::ACCUMULATES) {
        2
    } else {
        3
    };
    parts.extend((0..n).filter(|&k| info.src[k] != Ty::None).map(|k| {
        let ty = mask(info.src[k], wave64);
        let lt = lit_ty.unwrap_or_else(|| literal_ty(inst, ty));
        src_lit(inst, k, ty, lt)
    }));
    let mut s = join(parts);
    s.push_str(&vop3_mods(inst));
    s.push_str(&dp_alu_note(inst).unwrap_or_else(|| lane_sel_text(inst.lane_sel)));
    if let Some(sdwa) = inst.sdwa {
        s.push_str(&sdwa_text(inst, sdwa));
    }
    s
}

const SDWA_SEL: [&str; 8] = [
    "BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "7",
];

/// gfx10's SDWA selects: the destination's (not for VOPC), then src0's and
/// a VOP2/VOPC's src1.
fn sdwa_text(inst: &Inst, sdwa: Sdwa) -> String {
    let info = inst.op.info();
    let sel = |v: u8| SDWA_SEL[v as usize & 7];
    let mut s = String::new();
    let vopc = encoding(inst).format == Format::Vopc;
    // gfx940's fp8/bf8-to-f32 conversions have no destination select.
    let fp8_in = gfx9(inst)
        && ["_f32_fp8", "_f32_bf8"]
            .iter()
            .any(|t| info.name.ends_with(t));
    if !vopc && !fp8_in {
        // gfx9 prints the reserved value 3 as UNUSED_PAD.
        let three = if gfx9(inst) { "UNUSED_PAD" } else { "3" };
        let unused = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", three];
        s.push_str(&format!(
            " dst_sel:{} dst_unused:{}",
            sel(sdwa.dst_sel),
            unused[sdwa.dst_unused as usize & 3]
        ));
    }
    s.push_str(&format!(" src0_sel:{}", sel(sdwa.src_sel[0])));
    if encoding(inst).format != Format::Vop1 && info.src[1] != Ty::None {
        s.push_str(&format!(" src1_sel:{}", sel(sdwa.src_sel[1])));
    }
    s
}

fn vop3_mods(inst: &Inst) -> String {
    let m = &inst.mods;
    let mut s = String::new();
    if let Some(bits) = op_sel_bits(inst) {
        let list: Vec<String> = bits.iter().map(|b| b.to_string()).collect();
        s.push_str(&format!(" op_sel:[{}]", list.join(",")));
    }
    if m.clamp {
        s.push_str(" clamp");
    }
    s.push_str(match m.omod {
        1 => " mul:2",
        2 => " mul:4",
        3 => " div:2",
        _ => "",
    });
    s
}

/// The op_sel list LLVM 19 prints for a VOP3 instruction, if any. Its gfx11
/// printer is fake16: only some ops with 16-bit operands carry op_sel
/// (sources then destination); v_dot2_{f16_f16,bf16_bf16} show only the
/// src2/dst bits and v_permlane{,x}16 the fi/bound_ctrl bits.
fn op_sel_bits(inst: &Inst) -> Option<Vec<u8>> {
    let info = inst.op.info();
    let v = inst.mods.opsel;
    if v == 0 {
        return None;
    }
    let bit = |k: u8| v >> k & 1;
    let name = info.name;
    if name.starts_with("v_permlane") {
        return (v & 3 != 0).then(|| vec![bit(0), bit(1)]);
    }
    if name.starts_with("v_dot2_") {
        return (v & 12 != 0).then(|| vec![0, 0, bit(2), bit(3)]);
    }
    const WITH_OP_SEL: &[&str] = &[
        "v_div_fixup_f16",
        "v_fma_f16",
        "v_fmac_f16",
        "v_mad_i16",
        "v_mad_u16",
        "v_mad_i32_i16",
        "v_mad_u32_u16",
        "v_max3_f16",
        "v_max3_i16",
        "v_max3_u16",
        "v_min3_f16",
        "v_min3_i16",
        "v_min3_u16",
        "v_med3_f16",
        "v_med3_i16",
        "v_med3_u16",
        "v_pack_b32_f16",
        "v_add_nc_i16",
        "v_add_nc_u16",
        "v_sub_nc_i16",
        "v_sub_nc_u16",
        "v_cvt_pk_norm_i16_f16",
        "v_cvt_pk_norm_u16_f16",
        // gfx10's spelling
        "v_cvt_pknorm_i16_f16",
        "v_cvt_pknorm_u16_f16",
        // gfx12's
        "v_min3_num_f16",
        "v_max3_num_f16",
        "v_minimum3_f16",
        "v_maximum3_f16",
        "v_med3_num_f16",
        "v_minimummaximum_f16",
        "v_maximumminimum_f16",
        "v_cvt_pk_fp8_f32",
        "v_cvt_pk_bf8_f32",
        // gfx9's
        "v_mad_f16",
        "v_add_i16",
        "v_sub_i16",
    ];
    // gfx940's stochastic-rounding fp8 conversions show all four bits.
    if gfx9(inst) && name.starts_with("v_cvt_sr_") {
        return Some((0..4).map(bit).collect());
    }
    // gfx10's v_fmac_f16 has no op_sel.
    let gfx10_fmac = inst.family == crate::Family::Gfx10 && name == "v_fmac_f16";
    if !WITH_OP_SEL.contains(&name) || gfx10_fmac {
        return None;
    }
    let n = info.src.iter().filter(|t| **t != Ty::None).count() as u8;
    let n = if info.implicit.has(Implicit::ACCUMULATES) {
        3
    } else {
        n
    };
    let mut bits: Vec<u8> = (0..n).map(bit).collect();
    bits.push(bit(3));
    Some(bits)
}

fn lane_sel_text(l: LaneSel) -> String {
    match l {
        LaneSel::None => String::new(),
        LaneSel::Dpp8 {
            sel,
            fetch_inactive,
        } => {
            let list: Vec<String> = sel.iter().map(|s| s.to_string()).collect();
            let fi = if fetch_inactive { " fi:1" } else { "" };
            format!(" dpp8:[{}]{fi}", list.join(","))
        }
        LaneSel::Dpp16 {
            ctrl,
            row_mask,
            bank_mask,
            bound_ctrl,
            fetch_inactive,
        } => {
            let mut s = format!(
                " {} row_mask:{row_mask:#x} bank_mask:{bank_mask:#x}",
                dpp_ctrl(ctrl)
            );
            if bound_ctrl {
                s.push_str(" bound_ctrl:1");
            }
            if fetch_inactive {
                s.push_str(" fi:1");
            }
            s
        }
    }
}

/// gfx9's DPP on an op with 64-bit operands (gfx90a's DP ALU) takes only
/// row_newbcast; llvm-mc notes any other control in its place.
fn dp_alu_note(inst: &Inst) -> Option<String> {
    let LaneSel::Dpp16 { ctrl, .. } = inst.lane_sel else {
        return None;
    };
    let info = inst.op.info();
    let wide = info.dst.iter().chain(&info.src).any(|t| t.dwords() == 2);
    (gfx9(inst) && wide && !(0x150..=0x15f).contains(&ctrl)).then(|| {
        let note = " /* DP ALU dpp only supports row_newbcast */";
        lane_sel_text(inst.lane_sel).replacen(&dpp_ctrl(ctrl), note, 1)
    })
}

/// gfx9's own DPP controls (wave shifts, row_bcast, gfx90a's
/// row_newbcast in row_share's place), as llvm-mc prints them.
fn dpp_ctrl_gfx9(c: u16) -> Option<String> {
    Some(match c {
        0x130 => "wave_shl:1".into(),
        0x134 => "wave_rol:1".into(),
        0x138 => "wave_shr:1".into(),
        0x13c => "wave_ror:1".into(),
        0x142 => "row_bcast:15".into(),
        0x143 => "row_bcast:31".into(),
        0x150..=0x15f => format!("row_newbcast:{}", c & 15),
        0x160..=0x16f => "/* row_xmask is not supported on ASICs earlier than GFX10 */".into(),
        _ => return None,
    })
}

fn dpp_ctrl(c: u16) -> String {
    if let Some(t) = gfx9_names().then(|| dpp_ctrl_gfx9(c)).flatten() {
        return t;
    }
    match c {
        0..=0xff => format!(
            "quad_perm:[{},{},{},{}]",
            c & 3,
            c >> 2 & 3,
            c >> 4 & 3,
            c >> 6 & 3
        ),
        0x101..=0x10f => format!("row_shl:{}", c & 15),
        0x111..=0x11f => format!("row_shr:{}", c & 15),
        0x121..=0x12f => format!("row_ror:{}", c & 15),
        0x140 => "row_mirror".into(),
        0x141 => "row_half_mirror".into(),
        0x150..=0x15f => format!("row_share:{}", c & 15),
        0x160..=0x16f => format!("row_xmask:{}", c & 15),
        // gfx9's controls, and values no control has: noted as LLVM does.
        0x130 => "/* wave_shl is not supported starting from GFX10 */".into(),
        0x134 => "/* wave_rol is not supported starting from GFX10 */".into(),
        0x138 => "/* wave_shr is not supported starting from GFX10 */".into(),
        0x13c => "/* wave_ror is not supported starting from GFX10 */".into(),
        0x142 | 0x143 => "/* row_bcast is not supported starting from GFX10 */".into(),
        _ => "/* Invalid dpp_ctrl value */".into(),
    }
}

fn vop3p(inst: &Inst, wave64: bool) -> String {
    let info = inst.op.info();
    let m = &inst.mods;
    // WMMA's accumulator spans 8 VGPRs in wave32, 4 in wave64.
    // gfx12's matrix ops (and their sparse v_swmmac_*) spread A and B over
    // the wave too: half the VGPRs in wave64.
    let gfx12_matrix = inst.family == crate::Family::Gfx12
        && wave64
        && (info.name.starts_with("v_wmma") || info.name.starts_with("v_swmmac"));
    let acc = |ty: Ty| match ty {
        Ty::B256 if wave64 && (info.name.starts_with("v_wmma") || gfx12_matrix) => Ty::B128,
        Ty::B128 if wave64 && (info.name.starts_with("v_wmma") || gfx12_matrix) => Ty::B64,
        t => t,
    };
    let ab = |ty: Ty| match ty {
        Ty::B256 if gfx12_matrix => Ty::B128,
        Ty::B128 if gfx12_matrix => Ty::B64,
        Ty::B64 if gfx12_matrix => Ty::B32,
        t => t,
    };
    let mix = info.name.starts_with("v_fma_mix");
    let srcs = (0..3).filter(|&k| info.src[k] != Ty::None).map(|k| {
        // VOP3P prints neg as neg_lo:[...]; mix ops use neg/abs as VOP3.
        let mut i = inst.clone();
        if !mix {
            i.mods.neg = 0;
            i.mods.abs = 0;
        } else {
            i.mods.abs = m.neg_hi;
        }
        src_as(
            &i,
            k,
            if k == 2 {
                acc(info.src[2])
            } else {
                ab(info.src[k])
            },
        )
    });
    let mut s = join(
        std::iter::once(operand(inst.dst[0], acc(info.dst[0])))
            .chain(srcs)
            .collect(),
    );
    let n = info.src.iter().filter(|t| **t != Ty::None).count();
    let list = |v: u8| {
        (0..n)
            .map(|k| (v >> k & 1).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let full = (1u8 << n) - 1;
    let hi_default = if mix { 0 } else { full };
    if m.opsel & full != 0 {
        s.push_str(&format!(" op_sel:[{}]", list(m.opsel)));
    }
    let wmma32 = info.name.starts_with("v_wmma_f32") || info.name.starts_with("v_wmma_i32");
    if m.opsel_hi & full != hi_default && !wmma32 {
        s.push_str(&format!(" op_sel_hi:[{}]", list(m.opsel_hi)));
    }
    if m.neg & full != 0 && !mix {
        s.push_str(&format!(" neg_lo:[{}]", list(m.neg)));
    }
    if m.neg_hi & full != 0 && !mix {
        s.push_str(&format!(" neg_hi:[{}]", list(m.neg_hi)));
    }
    if m.clamp {
        s.push_str(" clamp");
    }
    s
}

/// CDNA's VOP3P-MAI: `vdst, A, B, C` and the nonzero broadcast fields.
fn mai(inst: &Inst) -> String {
    let info = inst.op.info();
    let mut parts = vec![operand(inst.dst[0], info.dst[0])];
    parts.extend(present_srcs(inst));
    let mut s = join(parts);
    let imm = inst.imm as u32;
    let blgp = imm >> crate::mai::BLGP_SHIFT & 7;
    for (name, v) in [
        ("cbsz", imm & crate::mai::CBSZ as u32),
        ("abid", imm >> crate::mai::ABID_SHIFT & 15),
    ] {
        if v != 0 {
            s.push_str(&format!(" {name}:{v}"));
        }
    }
    // gfx940's f64 MFMAs name the blgp bits as the sources' negations.
    let neg = inst.family == crate::Family::Gfx94 && info.name.starts_with("v_mfma_f64");
    match blgp {
        0 => {}
        b if neg => s.push_str(&format!(" neg:[{},{},{}]", b & 1, b >> 1 & 1, b >> 2)),
        b => s.push_str(&format!(" blgp:{b}")),
    }
    s
}

fn vopd(inst: &Inst) -> String {
    // When one half is fmaak/fmamk, LLVM types the shared literal as its
    // 32-bit K for both halves.
    let has_k = |i: &Inst| i.op.has(Implicit::K_ADDEND) || i.op.has(Implicit::K_FACTOR);
    let k_pair = has_k(inst) || inst.vopd_y.as_deref().is_some_and(has_k);
    let lit_ty = k_pair.then_some(Ty::B32);
    // VOPD's cndmask leaves its VCC operand implicit in the text.
    let half = |i: &Inst| {
        let mut i = i.clone();
        if i.op == Op::V_DUAL_CNDMASK_B32 {
            i.src[2] = Operand::None;
        }
        format!("{} {}", i.op.name(), valu_with(&i, false, lit_ty))
    };
    match &inst.vopd_y {
        Some(y) => format!("{} :: {}", half(inst), half(y)),
        None => half(inst),
    }
}

// ---- memory ------------------------------------------------------------------

fn ds(inst: &Inst) -> String {
    let info = inst.op.info();
    let mut parts = vec![operand(inst.dst[0], info.dst[0])];
    parts.extend((0..3).map(|k| operand(inst.src[k], info.src[k])));
    let mut s = join(parts);
    let (o0, o1) = (inst.imm & 0xff, inst.imm >> 8 & 0xff);
    // gfx10 spells the two-address ops `write2`, `read2`, `wrxchg2`.
    let two_addr = ["2addr", "2st64", "write2", "read2", "wrxchg2"];
    if two_addr.iter().any(|t| info.name.contains(t)) {
        if o0 != 0 {
            s.push_str(&format!(" offset0:{o0}"));
        }
        if o1 != 0 {
            s.push_str(&format!(" offset1:{o1}"));
        }
    } else if info.name == "ds_swizzle_b32" && inst.imm != 0 {
        s.push_str(&format!(" offset:{}", swizzle(inst.imm as u16)));
    } else if inst.imm != 0 {
        s.push_str(&format!(" offset:{}", inst.imm));
    }
    if inst.flags & flags::GDS != 0 {
        s.push_str(" gds");
    }
    // Ops without register operands (the GWS semaphores) start with a
    // modifier.
    s.trim_start().to_string()
}

/// The `ds_swizzle_b32` offset in LLVM's swizzle(...) macro syntax.
fn swizzle(off: u16) -> String {
    if off & 0x8000 != 0 {
        let l: Vec<String> = (0..4).map(|k| (off >> (2 * k) & 3).to_string()).collect();
        return format!("swizzle(QUAD_PERM,{})", l.join(","));
    }
    let (and, or, xor) = (off & 31, off >> 5 & 31, off >> 10 & 31);
    if and == 31 && or == 0 && xor.is_power_of_two() {
        return format!("swizzle(SWAP,{xor})");
    }
    if and == 31 && or == 0 && (xor + 1).is_power_of_two() && xor != 0 {
        return format!("swizzle(REVERSE,{})", xor + 1);
    }
    let group = (!and & 31) + 1;
    if xor == 0 && group.is_power_of_two() && group > 1 && or < group {
        return format!("swizzle(BROADCAST,{group},{or})");
    }
    let mask: String = (0..5)
        .rev()
        .map(|b| match (and >> b & 1, or >> b & 1, xor >> b & 1) {
            (1, _, 0) => 'p',
            (1, _, 1) => 'i',
            (0, 0, _) => '0',
            _ => '1',
        })
        .collect();
    format!("swizzle(BITMASK_PERM,\"{mask}\")")
}

/// A FLAT/GLOBAL/SCRATCH word's operands in every family: `vdst,
/// vaddr|off, vdata, saddr|off`, leaving out what the op has not (the
/// addtid ops' address, not even "off"; the FLAT segment's saddr; an
/// absent vdst or vdata prints nothing).
pub(crate) fn flat_operands(inst: &Inst, dst_ty: Ty) -> Vec<String> {
    let info = inst.op.info();
    let fmt = encoding(inst).format;
    let vaddr_ty = match (fmt, inst.src[2]) {
        (Format::Scratch, _) | (Format::Global, Operand::Sgpr(_)) => Ty::B32,
        _ => Ty::B64,
    };
    let off = |o: Operand, ty: Ty| match o {
        Operand::None => "off".into(),
        a => operand(a, ty),
    };
    let mut parts = vec![operand(inst.dst[0], dst_ty)];
    if info.src[0] != Ty::None {
        parts.push(off(inst.src[0], vaddr_ty));
    }
    parts.push(operand(inst.src[1], info.src[1]));
    match fmt {
        Format::Flat => {}
        Format::Global => parts.push(off(inst.src[2], Ty::B64)),
        _ => parts.push(off(inst.src[2], Ty::B32)),
    }
    parts
}

fn flat(inst: &Inst, wave64: bool) -> String {
    let info = inst.op.info();
    if info.src == [Ty::None; 3] && info.dst[0] == Ty::None {
        return policy(inst).trim_start().to_string(); // gfx12's global_inv
    }
    // gfx12's transposing loads spread their data over the wave: half the
    // VGPRs in wave64.
    let dst_ty = match info.dst[0] {
        Ty::B128 if wave64 && info.name.starts_with("global_load_tr") => Ty::B64,
        Ty::B64 if wave64 && info.name.starts_with("global_load_tr") => Ty::B32,
        t => t,
    };
    let mut s = join(flat_operands(inst, dst_ty));
    if inst.imm != 0 {
        s.push_str(&format!(" offset:{}", inst.imm));
    }
    s + &policy(inst)
}

/// A MUBUF/MTBUF word's data register and its type, in every family:
/// vdst when the op returns data, else vdata; atomics print it at its full
/// (source) width even when returning.
pub(crate) fn buffer_data(inst: &Inst) -> (Operand, Ty) {
    let info = inst.op.info();
    let data = if inst.dst[0] != Operand::None {
        inst.dst[0]
    } else {
        inst.src[1]
    };
    let ty = if info.src[1] != Ty::None {
        info.src[1]
    } else {
        info.dst[0]
    };
    (data, ty)
}

/// A MUBUF/MTBUF word's address: "off", one VGPR (offen or idxen), two
/// (both); nothing for an op without one (gfx9's buffer_store_lds_dword).
pub(crate) fn buffer_vaddr(inst: &Inst) -> String {
    let both = inst.flags & flags::OFFEN != 0 && inst.flags & flags::IDXEN != 0;
    match inst.src[0] {
        Operand::None if inst.op.info().src[0] == Ty::None => String::new(),
        Operand::None => "off".into(),
        a => operand(a, if both { Ty::B64 } else { Ty::B32 }),
    }
}

fn buffer(inst: &Inst) -> String {
    let info = inst.op.info();
    if info.src[2] == Ty::None {
        return String::new(); // buffer_gl0_inv, buffer_gl1_inv
    }
    let (data, data_ty) = buffer_data(inst);
    let vaddr = buffer_vaddr(inst);
    let soff = operand(inst.src[3], Ty::B32);
    // gfx10: tfe adds a status dword to the data; lds has none in VGPRs.
    let data_text = match inst.family {
        crate::Family::Gfx10 if inst.flags & flags::LDS != 0 => String::new(),
        crate::Family::Gfx10 if inst.flags & flags::TFE != 0 => {
            let n = data_ty.dwords() + 1;
            match data {
                Operand::Vgpr(v) => vgpr_name(v, n),
                d => operand(d, data_ty),
            }
        }
        _ => operand(data, data_ty),
    };
    let mut s = join(vec![data_text, vaddr, operand(inst.src[2], Ty::B128), soff]);
    if encoding(inst).format == Format::Mtbuf && inst.aux != 1 {
        let name = match inst.family {
            crate::Family::Gfx10 => sym::buf_format_gfx10(inst.aux),
            _ => sym::buf_format(inst.aux),
        };
        s.push_str(&format!(" format:{name}"));
    }
    for (bit, name) in [(flags::IDXEN, " idxen"), (flags::OFFEN, " offen")] {
        if inst.flags & bit != 0 {
            s.push_str(name);
        }
    }
    if inst.imm != 0 {
        s.push_str(&format!(" offset:{}", inst.imm));
    }
    s.push_str(&policy(inst));
    if inst.family == crate::Family::Gfx10 && inst.flags & flags::LDS != 0 {
        s.push_str(" lds");
    }
    if inst.flags & flags::TFE != 0 {
        s.push_str(" tfe");
    }
    s
}

// ---- graphics ----------------------------------------------------------------

/// `exp TARGET src0, src1, src2, src3 [done] [row_en]`; a disabled source
/// prints as `off`.
fn exp(inst: &Inst) -> String {
    let gfx10 = inst.family == crate::Family::Gfx10;
    let target = match inst.aux {
        t @ 0..=7 => format!("mrt{t}"),
        8 => "mrtz".into(),
        9 if gfx10 => "null".into(),
        t @ 21..=22 if gfx10 => format!("invalid_target_{t}"),
        t @ 32..=63 if gfx10 => format!("param{}", t - 32),
        t @ 12..=16 => format!("pos{}", t - 12),
        20 => "prim".into(),
        t @ 21..=22 => format!("dual_src_blend{}", t - 21),
        t => format!("invalid_target_{t}"),
    };
    let srcs: Vec<String> = inst
        .src
        .iter()
        .map(|&op| match op {
            Operand::None => "off".into(),
            op => operand(op, Ty::B32),
        })
        .collect();
    let mut s = format!("{target} {}", srcs.join(", "));
    if inst.imm & 1 << 4 != 0 {
        s.push_str(" done");
    }
    if inst.imm & 1 << 5 != 0 {
        s.push_str(" row_en");
    }
    // gfx10's compressed (16-bit pairs) and valid-mask flags.
    if inst.imm & 1 << 6 != 0 {
        s.push_str(" compr");
    }
    if inst.imm & 1 << 7 != 0 {
        s.push_str(" vm");
    }
    s
}

/// `v_interp_* vdst, src0, src1, src2 [op_sel] [clamp] wait_exp:N`.
fn vinterp(inst: &Inst) -> String {
    let mut parts = vec![operand(inst.dst[0], Ty::B32)];
    parts.extend((0..3).map(|k| src_as(inst, k, Ty::F32)));
    let mut s = join(parts);
    if inst.mods.opsel != 0 {
        let bits: Vec<String> = (0..4)
            .map(|k| (inst.mods.opsel >> k & 1).to_string())
            .collect();
        s.push_str(&format!(" op_sel:[{}]", bits.join(",")));
    }
    if inst.mods.clamp {
        s.push_str(" clamp");
    }
    s + &format!(" wait_exp:{}", inst.imm)
}

/// `lds_param_load vdst, attrN.c wait_vdst:N`, `lds_direct_load vdst
/// wait_vdst:N`.
/// gfx10's VOP3 interpolation ops: `vdst, src1, attrN.c[, src2][ high]`
/// (`v_interp_mov_f32`: the parameter for src1); the f32 ones name their
/// form (`_e32` VINTRP, `_e64` VOP3).
fn interp_gfx10(inst: &Inst) -> (String, String) {
    let info = inst.op.info();
    let mut parts = vec![operand(inst.dst[0], info.dst[0])];
    parts.push(match inst.src[1] {
        Operand::Const(p) if info.name == "v_interp_mov_f32" => match p {
            0 => "p10".to_string(),
            1 => "p20".to_string(),
            2 => "p0".to_string(),
            p => format!("invalid_param_{p}"),
        },
        _ => src(inst, 1),
    });
    let chan = ["x", "y", "z", "w"][(inst.aux & 3) as usize];
    parts.push(format!("attr{}.{chan}", inst.aux >> 2));
    if info.src[2] != Ty::None {
        parts.push(src(inst, 2));
    }
    let mut s = join(parts);
    if inst.imm != 0 {
        s.push_str(" high");
    }
    s.push_str(&vop3_mods(inst));
    // The f32 ones also have the 32-bit VINTRP word (4 bytes).
    let form = match (info.name.ends_with("_f32"), inst.size) {
        (false, _) => "",
        (true, 4) => "_e32",
        (true, _) => "_e64",
    };
    (format!("{}{form}", info.name), s)
}

fn lds_direct(inst: &Inst) -> String {
    let dst = operand(inst.dst[0], Ty::B32);
    let wait = match inst.family {
        // gfx10 and CDNA have no LDS-direct loads (their decoders make none).
        crate::Family::Gfx11
        | crate::Family::Gfx10
        | crate::Family::Gfx90a
        | crate::Family::Gfx94 => {
            format!("wait_vdst:{}", inst.imm)
        }
        crate::Family::Gfx12 => format!(
            "wait_va_vdst:{} wait_vm_vsrc:{}",
            inst.imm & 15,
            inst.imm >> 4 & 1
        ),
    };
    // lds_direct_load (gfx11), ds_direct_load (gfx12): no attribute.
    if inst.op.name().ends_with("direct_load") {
        return format!("{dst} {wait}");
    }
    let chan = ["x", "y", "z", "w"][inst.aux as usize & 3];
    format!("{dst}, attr{}.{chan} {wait}", inst.aux >> 2)
}

trait MaxDwords {
    fn max_dwords(self, other: Ty) -> Ty;
}

impl MaxDwords for Ty {
    /// The wider of two types (for SOPK's register operand).
    fn max_dwords(self, other: Ty) -> Ty {
        if other.dwords() > self.dwords() {
            other
        } else {
            self
        }
    }
}

/* cpu_switch.S — fiber context switch for the CPU accelerator: save the callee-saved state on the current stack, store the stack pointer, load another and restore (x86-64 SysV, AArch64 AAPCS64).
 *
 * void amp__cpu_switch_asm(void **save_sp, void *new_sp);
 * Frame left on a suspended stack, lowest address first (amp__cpu_ctx_make in
 * cpu_fiber.c builds the same frame for a fiber that has not run yet):
 *   x86-64 : r15 r14 r13 r12 rbx rbp return-address                        (56 bytes)
 *   aarch64: x19..x28 x29 x30 d8..d15                                      (160 bytes)
 * A new fiber "returns" into amp__cpu_fiber_start, which calls fn(arg) with
 * fn and arg taken from the restored callee-saved registers.
 *
 * The floating-point control state (MXCSR, x87 control word; FPCR) is not
 * switched: saving it doubled the cost of a switch, and a tile's work-items
 * share the thread's FP environment on the barrier-free path anyway. */

#if defined(__x86_64__)
    .text
    .globl amp__cpu_switch_asm
    .hidden amp__cpu_switch_asm
    .type amp__cpu_switch_asm, @function
    .p2align 4
amp__cpu_switch_asm:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .cfi_endproc
    .size amp__cpu_switch_asm, .-amp__cpu_switch_asm

    .globl amp__cpu_fiber_start
    .hidden amp__cpu_fiber_start
    .type amp__cpu_fiber_start, @function
    .p2align 4
amp__cpu_fiber_start:
    .cfi_startproc
    .cfi_undefined rip
    movq %r12, %rdi
    callq *%rbx
    ud2
    .cfi_endproc
    .size amp__cpu_fiber_start, .-amp__cpu_fiber_start

#elif defined(__aarch64__)
    .text
    .globl amp__cpu_switch_asm
    .hidden amp__cpu_switch_asm
    .type amp__cpu_switch_asm, %function
    .p2align 4
amp__cpu_switch_asm:
    .cfi_startproc
    sub sp, sp, #160
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #160
    ret
    .cfi_endproc
    .size amp__cpu_switch_asm, .-amp__cpu_switch_asm

    .globl amp__cpu_fiber_start
    .hidden amp__cpu_fiber_start
    .type amp__cpu_fiber_start, %function
    .p2align 4
amp__cpu_fiber_start:
    .cfi_startproc
    .cfi_undefined x30
    mov x0, x19
    blr x20
    brk #0
    .cfi_endproc
    .size amp__cpu_fiber_start, .-amp__cpu_fiber_start
#endif

#if defined(__linux__) && defined(__ELF__)
    .section .note.GNU-stack,"",%progbits
#endif

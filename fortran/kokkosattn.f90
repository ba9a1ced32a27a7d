! kokkosattn: Fortran 2008 bindings of the C API (core/c/include/kokkosattn.h); docs/c-fortran.md.
!
! Fortran's column-major q(H, N, T, B) is the row-major [B, T, N, H] the library expects with no
! copy: the array routines reverse the shape, so an array declared (head dim, heads, tokens,
! batch) is passed as it is. Non-contiguous arrays are refused (never copied in silently).
! Errors follow the Fortran convention: optional `stat` (0 or a KATTN_ERROR_* code) and `errmsg`;
! without `stat` an error stops the program with the message.
!
!   use kokkosattn
!   real(c_float), target :: q(64, 8, 128, 2), k(64, 8, 128, 2), v(64, 8, 128, 2), o(64, 8, 128, 2)
!   type(kattn_problem) :: p
!   call kattn_initialize()
!   call kattn_problem_create(p)
!   call kattn_set_array(p, KATTN_Q, q)       ! likewise KATTN_K, KATTN_V, KATTN_OUT
!   call kattn_set_causal(p, .true.)
!   call kattn_forward(p)                     ! host arrays: done on return
!   call kattn_problem_destroy(p)
!   call kattn_finalize()
!
! Device memory (CUDA Fortran, OpenACC host_data use_device, OpenMP use_device_addr): the device
! address as a c_ptr with kattn_set_device, its Fortran-order shape, and the stream to enqueue on.
module kokkosattn
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! kattn_status_t
  integer(c_int), parameter, public :: KATTN_OK = 0, KATTN_ERROR_INVALID_ARGUMENT = 1, &
    KATTN_ERROR_UNSUPPORTED = 2, KATTN_ERROR_BACKEND_FAILURE = 3, &
    KATTN_ERROR_OUT_OF_MEMORY = 4, KATTN_ERROR_INTERNAL = 5, KATTN_ERROR_NOT_INITIALIZED = 6
  ! kattn_dtype_t
  integer(c_int), parameter, public :: KATTN_F64 = 0, KATTN_F32 = 1, KATTN_F16 = 2, &
    KATTN_BF16 = 3, KATTN_F8_E4M3 = 4, KATTN_F8_E5M2 = 5, KATTN_I32 = 6, KATTN_BOOL = 7
  ! kattn_memory_t
  integer(c_int), parameter, public :: KATTN_MEMORY_HOST = 0, KATTN_MEMORY_CUDA = 1, &
    KATTN_MEMORY_HIP = 2
  ! kattn_role_t
  integer(c_int), parameter, public :: KATTN_Q = 0, KATTN_K = 1, KATTN_V = 2, KATTN_OUT = 3, &
    KATTN_LSE = 4, KATTN_BIAS = 5, KATTN_MASK = 6, KATTN_ALIBI_SLOPES = 7, &
    KATTN_SEQLENS_Q = 8, KATTN_SEQLENS_K = 9, KATTN_CU_SEQLENS_Q = 10, &
    KATTN_CU_SEQLENS_K = 11, KATTN_DOUT = 12, KATTN_DQ = 13, KATTN_DK = 14, KATTN_DV = 15, &
    KATTN_DBIAS = 16, &
    ! FP8 problems: per-tensor factors, real(c_float) arrays of shape [1]
    KATTN_FP8_DESCALE_Q = 17, KATTN_FP8_DESCALE_K = 18, KATTN_FP8_DESCALE_V = 19, &
    KATTN_FP8_DESCALE_S = 20, KATTN_FP8_SCALE_S = 21, KATTN_FP8_SCALE_O = 22, &
    KATTN_FP8_AMAX_S = 23, KATTN_FP8_AMAX_O = 24, KATTN_FP8_DESCALE_O = 25, &
    KATTN_FP8_DESCALE_DOUT = 26, KATTN_FP8_DESCALE_DP = 27, KATTN_FP8_SCALE_DP = 28, &
    KATTN_FP8_SCALE_DQ = 29, KATTN_FP8_SCALE_DK = 30, KATTN_FP8_SCALE_DV = 31, &
    KATTN_FP8_AMAX_DQ = 32, KATTN_FP8_AMAX_DK = 33, KATTN_FP8_AMAX_DV = 34, KATTN_FP8_AMAX_DP = 35, &
    ! attention sinks: real(c_float) [N], and their gradient (backward output)
    KATTN_SINKS = 36, KATTN_DSINKS = 37, &
    ! a paged KV cache: integer(c_int32_t) [B, max_pages_per_seq] (docs/semantics.md, paged_kv)
    KATTN_PAGE_TABLE = 38, &
    ! kattn_append_kv's new keys and values, [B, T_new, K, H] / [.., Hv] (C order)
    KATTN_K_NEW = 39, KATTN_V_NEW = 40
  ! kattn_backend_t
  integer(c_int), parameter, public :: KATTN_BACKEND_AUTO = 0, KATTN_BACKEND_REFERENCE = 1, &
    KATTN_BACKEND_NAIVE = 2, KATTN_BACKEND_PORTABLE = 3, KATTN_BACKEND_CUDNN = 4, &
    KATTN_BACKEND_CUDA = 5, KATTN_BACKEND_HIP = 6
  ! kattn_alignment_t
  integer(c_int), parameter, public :: KATTN_ALIGN_TOP_LEFT = 0, KATTN_ALIGN_BOTTOM_RIGHT = 1

  ! Handles (the C API's opaque pointers).
  type, public :: kattn_problem
    type(c_ptr) :: handle = c_null_ptr
  end type
  type, public :: kattn_plan
    type(c_ptr) :: handle = c_null_ptr
  end type

  public :: kattn_initialize, kattn_finalize, kattn_last_error, kattn_version
  public :: kattn_problem_create, kattn_problem_destroy, kattn_set_array, kattn_set_device
  public :: kattn_set_scale, kattn_set_softcap, kattn_set_causal, kattn_set_window, &
    kattn_set_alignment, kattn_set_dropout, kattn_set_deterministic, kattn_set_backend, &
    kattn_set_max_seqlens, kattn_set_layout_copies, kattn_set_allow_tf32
  public :: kattn_forward, kattn_backward, kattn_explain, kattn_selected_backend, kattn_synchronize
  public :: kattn_append_kv
  public :: kattn_plan_create, kattn_plan_execute, kattn_plan_backend, kattn_plan_destroy
  public :: kattn_plan_create_backward, kattn_plan_execute_backward

  ! Host arrays as tensors: real32, real64, int32, and 16-bit storage (bf16 / f16 bits in
  ! integer(c_int16_t), with the dtype given).
  interface kattn_set_array
    module procedure set_f32, set_f64, set_i32, set_16
  end interface

  ! The C functions (kokkosattn.h), one to one.
  interface
    integer(c_int) function c_initialize() bind(C, name="kattn_initialize")
      import :: c_int
    end function
    integer(c_int) function c_finalize() bind(C, name="kattn_finalize")
      import :: c_int
    end function
    type(c_ptr) function c_last_error() bind(C, name="kattn_last_error")
      import :: c_ptr
    end function
    type(c_ptr) function c_version() bind(C, name="kattn_version")
      import :: c_ptr
    end function
    integer(c_int) function c_problem_create(problem) bind(C, name="kattn_problem_create")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: problem
    end function
    integer(c_int) function c_problem_destroy(problem) bind(C, name="kattn_problem_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
    end function
    integer(c_int) function c_set_tensor(problem, role, data, dtype, rank, extents, strides, &
                                         memory) bind(C, name="kattn_problem_set_tensor")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: problem, data, strides
      integer(c_int), value :: role, dtype, rank, memory
      integer(c_int64_t), intent(in) :: extents(*)
    end function
    integer(c_int) function c_set_scale(problem, x) bind(C, name="kattn_problem_set_scale")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: problem
      real(c_double), value :: x
    end function
    integer(c_int) function c_set_softcap(problem, x) bind(C, name="kattn_problem_set_softcap")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: problem
      real(c_double), value :: x
    end function
    integer(c_int) function c_set_causal(problem, x) bind(C, name="kattn_problem_set_causal")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      integer(c_int), value :: x
    end function
    integer(c_int) function c_set_window(problem, left, right) &
        bind(C, name="kattn_problem_set_window")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: problem
      integer(c_int64_t), value :: left, right
    end function
    integer(c_int) function c_set_alignment(problem, x) &
        bind(C, name="kattn_problem_set_alignment")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      integer(c_int), value :: x
    end function
    integer(c_int) function c_set_dropout(problem, p, seed, offset) &
        bind(C, name="kattn_problem_set_dropout")
      import :: c_int, c_ptr, c_double, c_int64_t
      type(c_ptr), value :: problem
      real(c_double), value :: p
      integer(c_int64_t), value :: seed, offset ! uint64_t in C: the same bits
    end function
    integer(c_int) function c_set_deterministic(problem, x) &
        bind(C, name="kattn_problem_set_deterministic")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      integer(c_int), value :: x
    end function
    integer(c_int) function c_set_backend(problem, x) bind(C, name="kattn_problem_set_backend")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      integer(c_int), value :: x
    end function
    integer(c_int) function c_set_max_seqlens(problem, max_q, max_k) &
        bind(C, name="kattn_problem_set_max_seqlens")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: problem
      integer(c_int64_t), value :: max_q, max_k
    end function
    integer(c_int) function c_set_layout_copies(problem, x) &
        bind(C, name="kattn_problem_set_layout_copies")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      integer(c_int), value :: x
    end function
    integer(c_int) function c_set_allow_tf32(problem, x) &
        bind(C, name="kattn_problem_set_allow_tf32")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      integer(c_int), value :: x
    end function
    integer(c_int) function c_forward(problem, stream) bind(C, name="kattn_forward")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem, stream
    end function
    integer(c_int) function c_append_kv(problem, stream) bind(C, name="kattn_append_kv")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem, stream
    end function
    integer(c_int) function c_synchronize(memory, stream) bind(C, name="kattn_synchronize")
      import :: c_int, c_ptr
      integer(c_int), value :: memory
      type(c_ptr), value :: stream
    end function
    integer(c_int) function c_backward(problem, stream) bind(C, name="kattn_backward")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem, stream
    end function
    integer(c_int) function c_explain(problem, backward, text, size, needed) &
        bind(C, name="kattn_explain")
      import :: c_int, c_ptr, c_size_t, c_char
      type(c_ptr), value :: problem
      integer(c_int), value :: backward
      character(kind=c_char), intent(out) :: text(*)
      integer(c_size_t), value :: size
      integer(c_size_t), intent(out) :: needed
    end function
    integer(c_int) function c_selected_backend(problem, backend) &
        bind(C, name="kattn_selected_backend")
      import :: c_int, c_ptr
      type(c_ptr), value :: problem
      integer(c_int), intent(out) :: backend
    end function
    integer(c_int) function c_plan_create(plan, problem, stream) bind(C, name="kattn_plan_create")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: plan
      type(c_ptr), value :: problem, stream
    end function
    integer(c_int) function c_plan_execute(plan, q, k, v, out) bind(C, name="kattn_plan_execute")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, q, k, v, out
    end function
    integer(c_int) function c_plan_create_backward(plan, problem, stream) &
        bind(C, name="kattn_plan_create_backward")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: plan
      type(c_ptr), value :: problem, stream
    end function
    integer(c_int) function c_plan_execute_backward(plan, q, k, v, out, dout, dq, dk, dv) &
        bind(C, name="kattn_plan_execute_backward")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan, q, k, v, out, dout, dq, dk, dv
    end function
    integer(c_int) function c_plan_backend(plan, backend) bind(C, name="kattn_plan_backend")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
      integer(c_int), intent(out) :: backend
    end function
    integer(c_int) function c_plan_destroy(plan) bind(C, name="kattn_plan_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: plan
    end function
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

contains

  ! ---- errors: the Fortran convention over the C status ------------------------------------

  ! rc = KATTN_OK: stat = 0. Otherwise stat = rc and errmsg = the message (`message`, or the C
  ! API's) when present; without stat, stop with the message.
  subroutine finish(rc, stat, errmsg, message)
    integer(c_int), intent(in) :: rc
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    character(len=*), intent(in), optional :: message
    character(len=:), allocatable :: text
    if (present(stat)) stat = int(rc)
    if (rc == KATTN_OK) return
    if (present(message)) then
      text = message
    else
      text = kattn_last_error()
    end if
    if (present(errmsg)) errmsg = text
    if (.not. present(stat)) error stop "kokkosattn: " // text
  end subroutine

  function c_string(s) result(f)
    type(c_ptr), intent(in) :: s
    character(len=:), allocatable :: f
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(s))
    call c_f_pointer(s, chars, [n])
    allocate (character(len=n) :: f)
    do i = 1, n
      f(i:i) = chars(i)
    end do
  end function

  ! This thread's message of the last failed C API call ("" if none).
  function kattn_last_error() result(msg)
    character(len=:), allocatable :: msg
    msg = c_string(c_last_error())
  end function

  function kattn_version() result(v)
    character(len=:), allocatable :: v
    v = c_string(c_version())
  end function

  type(c_ptr) function or_null(stream)
    type(c_ptr), intent(in), optional :: stream
    or_null = c_null_ptr
    if (present(stream)) or_null = stream
  end function

  integer(c_int) function flag(x)
    logical, intent(in) :: x
    flag = merge(1_c_int, 0_c_int, x)
  end function

  ! ---- library, problems, options ----------------------------------------------------------

  subroutine kattn_initialize(stat, errmsg)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_initialize(), stat, errmsg)
  end subroutine

  subroutine kattn_finalize(stat, errmsg)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_finalize(), stat, errmsg)
  end subroutine

  subroutine kattn_problem_create(problem, stat, errmsg)
    type(kattn_problem), intent(out) :: problem
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_problem_create(problem%handle), stat, errmsg)
  end subroutine

  subroutine kattn_problem_destroy(problem)
    type(kattn_problem), intent(inout) :: problem
    integer(c_int) :: rc
    rc = c_problem_destroy(problem%handle)
    problem%handle = c_null_ptr
  end subroutine

  subroutine kattn_set_scale(problem, scale, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    real(c_double), intent(in) :: scale
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_scale(problem%handle, scale), stat, errmsg)
  end subroutine

  subroutine kattn_set_softcap(problem, softcap, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    real(c_double), intent(in) :: softcap
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_softcap(problem%handle, softcap), stat, errmsg)
  end subroutine

  subroutine kattn_set_causal(problem, causal, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    logical, intent(in) :: causal
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_causal(problem%handle, flag(causal)), stat, errmsg)
  end subroutine

  ! Inclusive bounds; -1 = unbounded.
  subroutine kattn_set_window(problem, left, right, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int64_t), intent(in) :: left, right
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_window(problem%handle, left, right), stat, errmsg)
  end subroutine

  subroutine kattn_set_alignment(problem, alignment, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int), intent(in) :: alignment
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_alignment(problem%handle, alignment), stat, errmsg)
  end subroutine

  subroutine kattn_set_dropout(problem, p, seed, offset, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    real(c_double), intent(in) :: p
    integer(c_int64_t), intent(in) :: seed, offset
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_dropout(problem%handle, p, seed, offset), stat, errmsg)
  end subroutine

  subroutine kattn_set_deterministic(problem, deterministic, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    logical, intent(in) :: deterministic
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_deterministic(problem%handle, flag(deterministic)), stat, errmsg)
  end subroutine

  subroutine kattn_set_backend(problem, backend, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int), intent(in) :: backend
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_backend(problem%handle, backend), stat, errmsg)
  end subroutine

  subroutine kattn_set_max_seqlens(problem, max_q, max_k, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int64_t), intent(in) :: max_q, max_k
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_max_seqlens(problem%handle, max_q, max_k), stat, errmsg)
  end subroutine

  subroutine kattn_set_layout_copies(problem, allow, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    logical, intent(in) :: allow
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_layout_copies(problem%handle, flag(allow)), stat, errmsg)
  end subroutine

  subroutine kattn_set_allow_tf32(problem, allow, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    logical, intent(in) :: allow
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_set_allow_tf32(problem%handle, flag(allow)), stat, errmsg)
  end subroutine

  ! ---- tensors -----------------------------------------------------------------------------

  ! A tensor by address, dtype and Fortran-order shape (fastest first, e.g. [H, N, T, B]): the C
  ! API gets the shape reversed and row-major strides.
  integer(c_int) function set_shaped(problem, role, data, dtype, shape, memory) result(rc)
    type(c_ptr), intent(in) :: problem, data
    integer(c_int), intent(in) :: role, dtype, memory
    integer(c_int64_t), intent(in) :: shape(:)
    integer(c_int64_t) :: extents(4)
    integer :: d, r
    r = size(shape)
    extents = 0
    do d = 1, min(r, 4)
      extents(d) = shape(r + 1 - d)
    end do
    rc = c_set_tensor(problem, role, data, dtype, int(r, c_int), extents, c_null_ptr, memory)
  end function

  ! A device array: its address (c_devloc, host_data use_device, use_device_addr), dtype,
  ! Fortran-order shape and memory (KATTN_MEMORY_CUDA or KATTN_MEMORY_HIP).
  subroutine kattn_set_device(problem, role, data, dtype, shape, memory, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int), intent(in) :: role, dtype, memory
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: shape(:)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(set_shaped(problem%handle, role, data, dtype, shape, memory), stat, errmsg)
  end subroutine

  ! Host arrays (assumed rank, so no copy-in): refused unless contiguous.
  subroutine set_host(problem, role, contiguous_array, data, dtype, shape, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int), intent(in) :: role, dtype
    logical, intent(in) :: contiguous_array
    type(c_ptr), intent(in) :: data
    integer(c_int64_t), intent(in) :: shape(:)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    if (.not. contiguous_array) then
      call finish(KATTN_ERROR_INVALID_ARGUMENT, stat, errmsg, "kattn_set_array: array of role " &
                  // trim(role_digits(role)) // ": expected a contiguous array, got a " &
                  // "non-contiguous section (pass a contiguous copy)")
      return
    end if
    call finish(set_shaped(problem%handle, role, data, dtype, shape, KATTN_MEMORY_HOST), stat, &
                errmsg)
  end subroutine

  function role_digits(role) result(s)
    integer(c_int), intent(in) :: role
    character(len=12) :: s
    write (s, '(i0)') role
  end function

  subroutine set_f32(problem, role, array, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int), intent(in) :: role
    real(c_float), intent(in), target :: array(..)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call set_host(problem, role, is_contiguous(array), c_loc(array), KATTN_F32, &
                  int(shape(array), c_int64_t), stat, errmsg)
  end subroutine

  subroutine set_f64(problem, role, array, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int), intent(in) :: role
    real(c_double), intent(in), target :: array(..)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call set_host(problem, role, is_contiguous(array), c_loc(array), KATTN_F64, &
                  int(shape(array), c_int64_t), stat, errmsg)
  end subroutine

  subroutine set_i32(problem, role, array, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int), intent(in) :: role
    integer(c_int32_t), intent(in), target :: array(..)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call set_host(problem, role, is_contiguous(array), c_loc(array), KATTN_I32, &
                  int(shape(array), c_int64_t), stat, errmsg)
  end subroutine

  ! 16-bit storage: bf16 or f16 bits (dtype KATTN_BF16 or KATTN_F16).
  subroutine set_16(problem, role, array, dtype, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    integer(c_int), intent(in) :: role, dtype
    integer(c_int16_t), intent(in), target :: array(..)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call set_host(problem, role, is_contiguous(array), c_loc(array), dtype, &
                  int(shape(array), c_int64_t), stat, errmsg)
  end subroutine

  ! ---- runs --------------------------------------------------------------------------------

  ! out (and lse) from q, k, v; enqueued on `stream` for device memory (absent: the default).
  subroutine kattn_forward(problem, stream, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_forward(problem%handle, or_null(stream)), stat, errmsg)
  end subroutine

  ! A decode step's keys: KATTN_K_NEW / KATTN_V_NEW appended into the cache KATTN_K / KATTN_V
  ! (paged by KATTN_PAGE_TABLE when set) at seqlens_k + t, then KATTN_SEQLENS_K grows by T_new;
  ! then kattn_forward on the same problem attends. Enqueued on `stream` for device memory.
  subroutine kattn_append_kv(problem, stream, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_append_kv(problem%handle, or_null(stream)), stat, errmsg)
  end subroutine

  ! Waits for the work enqueued on `stream` (absent: the default stream) for memory of that kind
  ! (KATTN_MEMORY_*): with OpenMP offload there is no other portable way to wait for it.
  subroutine kattn_synchronize(memory, stream, stat, errmsg)
    integer(c_int), intent(in) :: memory
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_synchronize(memory, or_null(stream)), stat, errmsg)
  end subroutine

  ! dq, dk, dv (and dbias) from dout.
  subroutine kattn_backward(problem, stream, stat, errmsg)
    type(kattn_problem), intent(in) :: problem
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_backward(problem%handle, or_null(stream)), stat, errmsg)
  end subroutine

  ! What the forward (backward: .true.) would run and why, every backend's verdict.
  function kattn_explain(problem, backward, stat, errmsg) result(text)
    type(kattn_problem), intent(in) :: problem
    logical, intent(in), optional :: backward
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    character(len=:), allocatable :: text
    character(kind=c_char), allocatable :: buf(:)
    integer(c_size_t) :: needed, length
    integer(c_int) :: rc, bw
    integer :: i
    needed = 0
    bw = 0
    if (present(backward)) bw = flag(backward)
    allocate (buf(1))
    rc = c_explain(problem%handle, bw, buf, 1_c_size_t, needed)
    if (rc == KATTN_OK) then
      length = needed
      deallocate (buf)
      allocate (buf(length))
      rc = c_explain(problem%handle, bw, buf, length, needed)
    end if
    call finish(rc, stat, errmsg)
    if (rc /= KATTN_OK) then
      text = ""
      return
    end if
    allocate (character(len=int(needed) - 1) :: text)
    do i = 1, int(needed) - 1
      text(i:i) = buf(i)
    end do
  end function

  ! The backend the forward would run (KATTN_BACKEND_*).
  integer(c_int) function kattn_selected_backend(problem, stat, errmsg) result(backend)
    type(kattn_problem), intent(in) :: problem
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    backend = KATTN_BACKEND_AUTO
    call finish(c_selected_backend(problem%handle, backend), stat, errmsg)
  end function

  ! ---- plans -------------------------------------------------------------------------------

  subroutine kattn_plan_create(plan, problem, stream, stat, errmsg)
    type(kattn_plan), intent(out) :: plan
    type(kattn_problem), intent(in) :: problem
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_plan_create(plan%handle, problem%handle, or_null(stream)), stat, errmsg)
  end subroutine

  ! New q, k, v, out of the planned shapes, by address (host or device: c_loc, c_devloc, ...).
  subroutine kattn_plan_execute(plan, q, k, v, out, stat, errmsg)
    type(kattn_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: q, k, v, out
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_plan_execute(plan%handle, q, k, v, out), stat, errmsg)
  end subroutine

  ! Backward plans (training loops): the backward planned once; each execute takes new q, k, v,
  ! out, dout, dq, dk, dv of the planned shapes by address.
  subroutine kattn_plan_create_backward(plan, problem, stream, stat, errmsg)
    type(kattn_plan), intent(out) :: plan
    type(kattn_problem), intent(in) :: problem
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_plan_create_backward(plan%handle, problem%handle, or_null(stream)), stat, errmsg)
  end subroutine

  subroutine kattn_plan_execute_backward(plan, q, k, v, out, dout, dq, dk, dv, stat, errmsg)
    type(kattn_plan), intent(in) :: plan
    type(c_ptr), intent(in) :: q, k, v, out, dout, dq, dk, dv
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call finish(c_plan_execute_backward(plan%handle, q, k, v, out, dout, dq, dk, dv), stat, errmsg)
  end subroutine

  integer(c_int) function kattn_plan_backend(plan, stat, errmsg) result(backend)
    type(kattn_plan), intent(in) :: plan
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    backend = KATTN_BACKEND_AUTO
    call finish(c_plan_backend(plan%handle, backend), stat, errmsg)
  end function

  subroutine kattn_plan_destroy(plan)
    type(kattn_plan), intent(inout) :: plan
    integer(c_int) :: rc
    rc = c_plan_destroy(plan%handle)
    plan%handle = c_null_ptr
  end subroutine

end module kokkosattn

/*
 * Build-time stand-in for bcryptprimitives.dll, which Wine 8 lacks.
 *
 * Only installed into the Wine prefix used to run PyInstaller and the smoke
 * test; it is never shipped in the Yupana bundle (real Windows has the DLL).
 * cryptography's Rust extension imports ProcessPrng from it.
 */
#include <windows.h>

/* advapi32's RtlGenRandom, exported as SystemFunction036. */
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}

/* Lets tests/test_packaging.py recognise this stub if it ever reached a bundle. */
__attribute__((used)) static const char yupana_marker[] = "YUPANA-WINE-BUILD-STUB";

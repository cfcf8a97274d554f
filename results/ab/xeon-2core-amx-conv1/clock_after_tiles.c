#include <immintrin.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <time.h>
typedef struct { uint8_t palette, start; uint8_t res[14]; uint16_t colsb[16]; uint8_t rows[16]; } __attribute__((packed)) Cfg;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
__attribute__((noinline)) static __m512 fma_loop(long n, __m512 a){
  __m512 x0=a,x1=a,x2=a,x3=a,x4=a,x5=a,x6=a,x7=a,x8=a,x9=a; __m512 m=_mm512_set1_ps(0.999f);
  for(long i=0;i<n;i++){ x0=_mm512_fmadd_ps(x0,m,a);x1=_mm512_fmadd_ps(x1,m,a);x2=_mm512_fmadd_ps(x2,m,a);x3=_mm512_fmadd_ps(x3,m,a);x4=_mm512_fmadd_ps(x4,m,a);
    x5=_mm512_fmadd_ps(x5,m,a);x6=_mm512_fmadd_ps(x6,m,a);x7=_mm512_fmadd_ps(x7,m,a);x8=_mm512_fmadd_ps(x8,m,a);x9=_mm512_fmadd_ps(x9,m,a);}
  return _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(x0,x1),_mm512_add_ps(x2,x3)),_mm512_add_ps(_mm512_add_ps(x4,x5),_mm512_add_ps(_mm512_add_ps(x6,x7),_mm512_add_ps(x8,x9))));
}
static uint16_t buf[512] __attribute__((aligned(64)));
int main(int argc, char**argv){
  syscall(SYS_arch_prctl, 0x1023, 18);
  Cfg c; memset(&c,0,sizeof c); c.palette=1; for(int t=0;t<8;t++){c.rows[t]=16;c.colsb[t]=64;}
  for(int i=0;i<512;i++) buf[i]=0x3c00;
  for(int mode=0;mode<4;mode++){
    __m512 acc=_mm512_set1_ps(1); long reps=2000; long n=2000; // 20000 FMAs per rep
    double tf=0;
    for(long r=0;r<reps;r++){
      if(mode==1||mode==3){ _tile_loadconfig(&c); }
      if(mode>=2){ _tile_loadd(4,buf,64);_tile_loadd(6,buf,64); for(int k=0;k<64;k++) _tile_dpbf16ps(0,4,6); }
      double t0=now(); acc=fma_loop(n,acc); tf+=now()-t0;
    }
    float o[16]; _mm512_storeu_ps(o,acc);
    printf("mode %d (%s): FMA loop %.1f GFMA/s (%f)\n",mode, mode==0?"FMA only":mode==1?"+ldtilecfg":mode==2?"+64 TDPs between":"+cfg+TDPs", reps*n*10.0*16/tf*1e-9, o[0]);
  }
}
